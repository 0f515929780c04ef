"""Evaluation: offline retrieval, failure-injection simulation, latency, sensitivity."""

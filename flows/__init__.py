"""Prefect flows: one flow per stage and the parent flow build-ecoagent; they only wire stages."""

"""EcoAgent-Real: ToolBench queries, recall, the LLM validator, and the 200-item manual check."""

"""EcoAgent-Syn: LLM query generation, near-duplicate removal, hard negatives, splits."""

"""EcoAgent core: what several stages share (artifact layout, record schemas, config, models, LLM seam)."""

__version__ = "0.1.0"

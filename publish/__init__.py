"""Publish: the Hugging Face dataset folder (parquet configs, card, Croissant, manifest) and Hub upload."""

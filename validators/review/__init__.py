"""The 200-item manual check of the Real validator: sample, labelling page, agreement report."""

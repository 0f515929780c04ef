"""RATED: fine-tuned dual encoder + discounted LinUCB per tool + metadata prior."""

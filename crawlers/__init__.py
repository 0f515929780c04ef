"""Crawl: the four tool catalogs (mirror or live) into one tool table, with health signals and the prior."""

"""Croissant 1.0 JSON-LD for the dataset folder: one FileObject per parquet file, one RecordSet per config.

Paths are relative to the folder, so the same file describes the local folder and the Hub repo. Fields
mirror the parquet columns; list columns are marked ``repeated``, struct columns get sub-fields.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from publish.citation import VERSION, bibtex, dataset_url
from publish.configs import N8N_LICENSE_LINK, Config

__all__ = ["CONTEXT", "croissant"]

LICENSE_URLS = {
    "mit": "https://opensource.org/licenses/MIT",
    "apache-2.0": "https://www.apache.org/licenses/LICENSE-2.0",
    "other": N8N_LICENSE_LINK,
}

# the standard Croissant 1.0 context
CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}


def _data_type(dtype: pl.DataType) -> str:
    if dtype == pl.Boolean:
        return "sc:Boolean"
    if dtype.is_integer():
        return "sc:Integer"
    if dtype.is_float():
        return "sc:Float"
    if dtype.is_temporal():
        return "sc:Date"
    return "sc:Text"


def _field(record_set: str, file_id: str, name: str, dtype: pl.DataType) -> dict[str, Any] | None:
    """A Croissant field reading column ``name``; None for nested types mlcroissant cannot read yet."""
    fid = f"{record_set}/{name}"
    field: dict[str, Any] = {"@type": "cr:Field", "@id": fid, "name": fid, "description": f"column {name}"}
    if isinstance(dtype, pl.List):
        inner = dtype.inner
        if isinstance(inner, pl.Struct | pl.List):
            return None  # list of structs (tool arguments): kept in the parquet, left out of the record set
        field["dataType"] = _data_type(inner)
        field["repeated"] = True
    elif isinstance(dtype, pl.Struct):
        return None
    else:
        field["dataType"] = _data_type(dtype)
    field["source"] = {"fileObject": {"@id": file_id}, "extract": {"column": name}}
    return field


def croissant(
    configs: Mapping[str, Config],
    meta: Mapping[str, Any],
    sha256: Mapping[str, str],
    description: str,
    *,
    repo_id: str | None = None,
    published: dt.date | None = None,
) -> dict[str, Any]:
    """The Croissant JSON-LD dict for the dataset folder.

    Args:
        configs: the dataset's configs.
        meta: the card's YAML metadata (name, licenses).
        sha256: relative path -> sha256 of each data file.
        description: the dataset's one-paragraph description.
        repo_id: the Hub id the dataset is published under (default ``ecoagent.config.HUB_REPO_ID``).
        published: ``datePublished`` (default: today; the pipeline passes ``citation.date_published``).
    """
    published = published or dt.datetime.now(dt.UTC).date()
    distribution: list[dict[str, Any]] = []
    record_sets: list[dict[str, Any]] = []
    for c in configs.values():
        for split, frame in c.splits.items():
            path = c.data_file(split)
            file_id = path
            distribution.append(
                {
                    "@type": "cr:FileObject",
                    "@id": file_id,
                    "name": file_id,
                    "description": f"config {c.name}, split {split}",
                    "contentUrl": path,
                    "encodingFormat": "application/x-parquet",
                    "sha256": sha256[path],
                }
            )
            rs_id = c.name if len(c.splits) == 1 else f"{c.name}_{split}"
            fields = [f for n, dt in frame.schema.items() if (f := _field(rs_id, file_id, n, dt)) is not None]
            record_sets.append(
                {
                    "@type": "cr:RecordSet",
                    "@id": rs_id,
                    "name": rs_id,
                    "description": f"{c.description} Split: {split}.",
                    "field": fields,
                }
            )
    return {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "name": "EcoAgent",
        "description": description,
        "conformsTo": "http://mlcommons.org/croissant/1.0",
        "citeAs": bibtex(repo_id, published, VERSION),
        "datePublished": published.isoformat(),
        "license": [LICENSE_URLS.get(lic, lic) for lic in meta["license"]],
        "url": dataset_url(repo_id),
        "version": VERSION,
        "keywords": list(meta.get("tags", [])),
        "distribution": distribution,
        "recordSet": record_sets,
    }


def write_croissant(path: Path, data: Mapping[str, Any]) -> None:
    """Write the JSON-LD (sorted keys via ``write_json``)."""
    from ecoagent.artifacts import write_json

    write_json(path, data)

"""Call arguments from a JSON Schema (CrewAI's ``run_params_schema``) or from a list of code-read args."""

from __future__ import annotations

from typing import Any

from crawlers.record import Argument


def schema_type(prop: dict[str, Any]) -> str | None:
    """A short type name for a JSON Schema property (``anyOf`` members joined with ``|``)."""
    if "type" in prop:
        t = prop["type"]
        return "|".join(t) if isinstance(t, list) else str(t)
    variants = prop.get("anyOf") or prop.get("oneOf")
    if isinstance(variants, list):
        names = [
            str(v.get("type") or v.get("$ref", "").rsplit("/", 1)[-1])
            for v in variants
            if isinstance(v, dict)
        ]
        return "|".join(n for n in names if n) or None
    if "$ref" in prop:
        return str(prop["$ref"]).rsplit("/", 1)[-1]
    return None


def arguments_from_schema(schema: dict[str, Any] | None) -> list[Argument]:
    """One ``Argument`` per property, ``required`` from the schema's ``required`` list."""
    if not isinstance(schema, dict):
        return []
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    return [
        Argument(
            name=str(name),
            type=schema_type(prop) if isinstance(prop, dict) else None,
            description=(prop.get("description") if isinstance(prop, dict) else None),
            required=name in required,
        )
        for name, prop in props.items()
    ]

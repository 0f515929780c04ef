"""The labelling server over HTTP: state, saving a label, rejecting bad input, safe headers."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from validators.review.labels import read_labels
from validators.review.server import PortBusy, ReviewServer


def _get(url: str) -> tuple[int, dict[str, str], bytes]:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return resp.status, dict(resp.headers), resp.read()


def _post(url: str, body: dict[str, str]) -> tuple[int, dict[str, object]]:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_state_and_label_round_trip(server: ReviewServer, review_out: Path) -> None:
    assert server.url.startswith("http://127.0.0.1:")
    status, headers, body = _get(server.url + "api/state")
    state = json.loads(body)
    assert status == 200 and len(state["items"]) == 6 and state["labels"] == {}
    assert "validator_score" not in state["items"][0] and "kept" not in state["items"][0]  # blind labelling
    first = state["items"][0]["item_id"]
    status, result = _post(server.url + "api/label", {"item_id": first, "label": "no_match"})
    assert status == 200 and result == {"ok": True, "labeled": 1, "total": 6}
    assert read_labels(review_out / "review" / "labels.jsonl")[first]["label"] == "no_match"
    assert json.loads(_get(server.url + "api/state")[2])["labels"] == {first: "no_match"}


def test_items_carry_arguments_docs_and_node_context(server: ReviewServer, review_out: Path) -> None:
    import polars as pl

    from validators.review.server import tool_context

    tools = pl.read_parquet(review_out / "tools.parquet")
    state = json.loads(_get(server.url + "api/state")[2])
    by_id = {r["tool_id"]: r for r in tools.iter_rows(named=True)}
    for item in state["items"]:
        ctx, row = item["context"], by_id[item["tool_id"]]
        assert [a["name"] for a in ctx["arguments"]] == [a["name"] for a in row["arguments"]][:15]
        assert ctx["doc_url"] == row["doc_url"] and ctx["tags"] == list(row["tags"])
    # an n8n operation names its node and the node's other operations
    n8n = tools.filter(pl.col("tool_id").str.starts_with("n8n:")).sort("tool_id")
    node = n8n["tool_id"][0].rsplit(":", 1)[0]
    ctx = tool_context(n8n)[n8n["tool_id"][0]]
    same = n8n.filter(pl.col("tool_id").str.starts_with(node + ":"))
    assert ctx["group"] == node and ctx["siblings_total"] == same.height - 1
    # a doc URL that is not http(s) never becomes a link
    odd = tools.head(1).with_columns(pl.lit("javascript:alert(1)").alias("doc_url"))
    assert tool_context(odd)[odd["tool_id"][0]]["doc_url"] is None


def test_the_page_states_the_decision_rule(server: ReviewServer) -> None:
    page = _get(server.url)[2].decode()
    assert "Decision rule" in page and "multi-step query" in page and "Unsure" in page


def test_bad_labels_are_rejected(server: ReviewServer, review_out: Path) -> None:
    status, result = _post(server.url + "api/label", {"item_id": "r-unknown", "label": "match"})
    assert status == 400 and "unknown item" in str(result["error"])
    item = json.loads(_get(server.url + "api/state")[2])["items"][0]["item_id"]
    status, result = _post(server.url + "api/label", {"item_id": item, "label": "<script>"})
    assert status == 400 and "not one of" in str(result["error"])
    assert not (review_out / "review" / "labels.jsonl").exists()


def test_page_headers_forbid_inline_script(server: ReviewServer) -> None:
    status, headers, body = _get(server.url)
    assert status == 200 and b'<script src="/app.js"' in body
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert headers["X-Content-Type-Options"] == "nosniff"
    status, headers, body = _get(server.url + "app.js")
    assert b"innerHTML" not in body and b"textContent" in body
    with pytest.raises(urllib.error.HTTPError):
        _get(server.url + "../../etc/passwd")


def test_missing_sample(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="ecoagent review sample"):
        ReviewServer(tmp_path)


def test_a_busy_port_is_one_clear_error(server: ReviewServer, review_out: Path) -> None:
    from ecoagent.cli import main

    port = server.httpd.server_address[1]
    with pytest.raises(PortBusy, match=f"port {port} on 127.0.0.1 is busy"):
        ReviewServer(review_out, port=port)
    assert main(["review", "--out", str(review_out), "--port", str(port)]) == 1

"""End to end: `ecoagent evaluate` on a tiny artifact folder writes the report, and repeats itself."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from ecoagent.artifacts import ArtifactDir, write_json, write_parquet
from ecoagent.config import get_profile
from ecoagent.schemas import TOOL_SCHEMA, rows_to_frame

TOOLS = {
    "gmail": ("Gmail", "Send, read and search email messages in a Gmail inbox"),
    "outlook": ("Outlook Mail", "Send and read email through Microsoft Outlook"),
    "pdf": ("PDF Reader", "Extract the text content of a PDF document"),
    "ocr": ("OCR", "Recognize printed text in scanned images and PDF pages"),
    "weather": ("OpenWeather", "Get the current weather and forecast for a city"),
    "search": ("Google Search", "Search the web and return result snippets"),
    "wiki": ("Wikipedia", "Look up encyclopedia articles on a topic"),
    "slack": ("Slack", "Post a message to a Slack channel"),
    "sheets": ("Google Sheets", "Append rows to and read cells of a spreadsheet"),
    "calendar": ("Google Calendar", "Create and list calendar events and meetings"),
    "github": ("GitHub", "Open issues and read pull requests in a repository"),
    "translate": ("DeepL", "Translate text between languages"),
}
QUERIES = {
    "gmail": ["email my manager the report", "check my gmail inbox", "send a message by email"],
    "outlook": ["send an outlook email", "read mail in outlook", "reply to an email in outlook"],
    "pdf": ["get the text out of this pdf", "read the pdf file", "extract pdf contents"],
    "ocr": ["read the text in this scanned photo", "recognize characters in an image", "ocr a scan"],
    "weather": ["what is the weather in Paris", "forecast for tomorrow in Rome", "is it raining in Oslo"],
    "search": ["search the web for news", "google the latest results", "find web pages about llamas"],
    "wiki": ["look up the history of Rome", "encyclopedia article on whales", "wikipedia entry for Mars"],
    "slack": ["post to the team slack channel", "send a slack message", "notify the channel on slack"],
    "sheets": ["add a row to my spreadsheet", "read a cell from the sheet", "append data to google sheets"],
    "calendar": ["schedule a meeting on friday", "list my calendar events", "create a calendar invite"],
    "github": ["open an issue on the repo", "read the pull request", "list github issues"],
    "translate": ["translate this to German", "say hello in Japanese", "translate the paragraph"],
}


TOOL_SPLIT = {"github": "test", "translate": "test", "wiki": "test", "calendar": "val", "sheets": "val"}
MCP_PROMPTS = [
    ("Find recent web results about electric cars", ("search",)),
    ("Post 'deploy done' in the ops channel", ("slack",)),
    ("Create an issue titled 'login broken'", ("github",)),
]


@pytest.fixture(scope="module")
def tiny_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """12 tools; Syn = 3 queries per tool; Real = the same queries, email ones with two true tools."""
    out = tmp_path_factory.mktemp("eval")
    art = ArtifactDir(out)
    tools = [
        {
            "tool_id": f"test:{k}",
            "name": n,
            "description": d,
            "platform": "langchain",
            "tags": [],
            "endpoints": [],
            "auth_names": [],
            "arguments": [],
            "prior": 0.5 + 0.03 * i,
            "link_status": "ok",
            "auth_kind": "none",
        }
        for i, (k, (n, d)) in enumerate(TOOLS.items())
    ]
    write_parquet(rows_to_frame(tools, TOOL_SCHEMA), art.tools)
    rows = []
    for tool, queries in QUERIES.items():
        for i, q in enumerate(queries):
            rows.append(
                {
                    "query_id": f"{tool}-{i}",
                    "query": q,
                    "tool_id": f"test:{tool}",
                    "split": ["train", "test", "test"][i],
                    # tool-disjoint: every query of a tool in one split
                    "split_tool": TOOL_SPLIT.get(tool, "train"),
                }
            )
    syn = pl.DataFrame(rows)
    write_parquet(syn, art.syn_positives)
    # names_tool as Syn's filter would set it: the query contains the tool's own name
    names = {k: n.split()[0].lower() for k, (n, _) in TOOLS.items()}
    write_parquet(
        syn.with_columns(
            pl.struct("query", "tool_id")
            .map_elements(lambda r: names[r["tool_id"][5:]] in r["query"], return_dtype=pl.Boolean)
            .alias("names_tool")
        ),
        art.syn_queries,
    )
    syn = syn.drop("split_tool")
    extra = syn.filter(pl.col("tool_id") == "test:gmail").with_columns(
        pl.lit("test:outlook").alias("tool_id")
    )
    real = pl.concat([syn, extra]).with_columns(
        pl.lit("G1").alias("group"),
        pl.lit(0.5).alias("cosine"),
        pl.lit(0.9).alias("validator_score"),
        # the Gmail pairs only BM25 proposed; every other pair both recall retrievers did
        pl.when(pl.col("tool_id") == "test:gmail")
        .then(pl.lit(["BM25"]))
        .otherwise(pl.lit(["BM25", "all-MiniLM-L6-v2"]))
        .alias("proposed_by"),
    )
    write_parquet(real, art.real_pairs)
    from validators.mcp_prompts import McpPrompt, write_prompts

    write_prompts(
        [
            McpPrompt(f"mcp:s:{i}", q, tuple(f"test:{t}" for t in ts), "s", f"mcpm/s.json examples[{i}]")
            for i, (q, ts) in enumerate(MCP_PROMPTS)
        ],
        art.real_mcp_prompts,
    )
    # the server-level set: every prompt with all of the server's records (one more prompt than judged)
    server_tools = tuple(sorted({f"test:{t}" for _, ts in MCP_PROMPTS for t in ts}))
    write_prompts(
        [
            McpPrompt(f"mcp:s:{i}", q, server_tools, "s", f"mcpm/s.json examples[{i}]")
            for i, q in enumerate([q for q, _ in MCP_PROMPTS] + ["Send an email to the team"])
        ],
        art.real_mcp_server_prompts,
    )
    from rated.encoder import DualEncoder

    DualEncoder.from_backbones("sentence-transformers/all-MiniLM-L6-v2").save(str(art.model))
    scores = {"MRR": 0.5, "Recall@1": 0.4, "Recall@5": 0.6, "nDCG@10": 0.55}
    held_out = {
        "syn_tool_split_test": {
            "distinct_queries": 9,
            "smoke_test": "x",
            "backbone": scores,
            "fine-tuned": {**scores, "MRR": 0.45},
            "mrr_gain": -0.05,
            "verdict": "fine-tuned does NOT beat backbone on MRR (0.4500 vs 0.5000; paired 95% CI ...)",
        },
        "real_test": {"skipped": "real/pairs.parquet did not exist when the encoder was trained"},
    }
    write_json(
        art.model / "metrics.json", {"held_out": held_out, "fine_tuning_loses": "it lost: noise", "steps": 2}
    )
    return out


OPTIONS = dict(
    seeds=2,
    steps=900,
    onset=300,
    window_end=600,
    warm_up_pairs=50,
    dense_models=("sentence-transformers/all-MiniLM-L6-v2",),
    n_resamples=200,
    latency_queries=8,
    sensitivity_steps=600,
)


def test_pipeline_writes_the_report_and_repeats(tiny_out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rated.evaluation import pipeline

    monkeypatch.syspath_prepend(str(Path(__file__).parent))  # the example plug-ins live beside this test
    profile = get_profile("embedded")
    plugins = {"retrievers": ("plugin_example:WordOverlap",), "policies": ("plugin_example:TwoStrikes",)}
    stats = pipeline.run(tiny_out, profile, **OPTIONS, **plugins)
    eval_dir = tiny_out / "eval"
    report = json.loads((eval_dir / "report.json").read_text())
    config = json.loads((eval_dir / "config.json").read_text())
    assert config["seeds"] == [0, 1] and config["evaluation"]["steps"] == 900
    methods = {r["method"] for r in report["offline"]["rows"]}
    assert {
        "TF-IDF",
        "BM25",
        "all-MiniLM-L6-v2",
        "RATED Full (encoder only)",
        "Word overlap (plug-in)",
    } <= methods
    assert "RATED w/o Contrastive (encoder only)" in methods
    # the pretrained encoder and w/o Contrastive's encoder-only row are the same model: equal numbers
    rows = {(r["method"], r["split"]): r for r in report["offline"]["rows"]}
    for split in ("syn", "syn_tool", "real", "mcp", "mcp_server"):
        assert (
            rows[("all-MiniLM-L6-v2", split)]["MRR"]
            == rows[("RATED w/o Contrastive (encoder only)", split)]["MRR"]
        )
    pools = report["offline"]["pools"]
    assert pools["syn_tool"] == {"queries": 9, "true_tools": 3}  # the three tool-split test tools
    assert pools["syn"]["queries"] == 24 and pools["mcp"] == {"queries": 3, "true_tools": 3}
    assert pools["mcp_server"] == {"queries": 4, "true_tools": 3}
    # every prompt is labelled with all three of the server's records: one hit is a third of the recall
    for method in ("TF-IDF", "BM25", "all-MiniLM-L6-v2"):
        assert rows[(method, "mcp_server")]["Recall@1"] <= 1 / 3 + 1e-9
        assert rows[(method, "mcp_server")]["MRR"] > 0
    assert set(report["offline"]["significance"]) == {"syn", "syn_tool", "real", "mcp", "mcp_server"}
    # construction advantage: TF-IDF took no part (plain MRR); MiniLM did not propose only the Gmail pairs
    adv = report["offline"]["construction_advantage"]["methods"]
    assert adv["TF-IDF"]["proposer"] is None and adv["TF-IDF"]["mrr_not_proposed"] == pytest.approx(
        rows[("TF-IDF", "real")]["MRR"]
    )
    assert adv["BM25"]["queries_not_proposed"] == 0 and adv["BM25"]["mrr_not_proposed"] is None
    assert adv["all-MiniLM-L6-v2"]["queries_not_proposed"] == 2  # gmail-1, gmail-2 (test)
    assert adv["RATED w/o Contrastive (encoder only)"]["proposer"] == "all-MiniLM-L6-v2"
    assert (
        adv["RATED w/o Contrastive (encoder only)"]["mrr_not_proposed"]
        == adv["all-MiniLM-L6-v2"]["mrr_not_proposed"]
    )
    assert adv["RATED Full (encoder only)"]["proposer"] is None
    assert report["offline"]["significance"]["real"]["exact"] is False  # 24 test queries > 20
    # Syn's Table 1 split by tool naming: the test queries containing their tool's name, in pool order
    naming = {"gmail-1", "outlook-1", "outlook-2", "pdf-1", "pdf-2", "ocr-2", "wiki-2", "slack-1", "slack-2"}
    naming |= {"github-2", "search-1", "sheets-2"}  # "google the latest results", "... google sheets"
    by = report["offline"]["by_naming"]["syn"]
    assert (by["queries_naming"], by["queries_not_naming"]) == (12, 12)
    test_ids = sorted(f"{t}-{i}" for t in QUERIES for i in (1, 2))
    for method, cell in by["methods"].items():
        rr = report["offline"]["per_query_rr"][f"{method} | syn"]
        flagged = [x for q, x in zip(test_ids, rr, strict=True) if q in naming]
        rest = [x for q, x in zip(test_ids, rr, strict=True) if q not in naming]
        assert cell["mrr_naming"] == pytest.approx(sum(flagged) / 12)
        assert cell["mrr_not_naming"] == pytest.approx(sum(rest) / 12)
    # the name is the strongest lexical cue
    assert by["methods"]["BM25"]["mrr_naming"] > by["methods"]["BM25"]["mrr_not_naming"]
    tests = by["fine_tuned_vs_backbone"]
    assert tests["naming"]["n_queries"] == 12 and tests["not_naming"]["n_queries"] == 12
    cells = by["methods"]
    for part, key in (("naming", "mrr_naming"), ("not_naming", "mrr_not_naming")):
        diff = cells["RATED Full (encoder only)"][key] - cells["RATED w/o Contrastive (encoder only)"][key]
        assert tests[part]["mean_diff"] == pytest.approx(diff)
    text = (eval_dir / "report.md").read_text()
    assert "names its tool" in text and "Fine-tuned encoder vs its backbone" in text
    assert "- syn_tool_split_test: fine-tuned does NOT beat backbone on MRR (0.4500 vs 0.5000" in text
    real = report["simulation"]["real"]["scenarios"]
    assert {"rho=20%", "rho=30%", "recovering (rho=20%)"} <= set(real)
    agg = real["rho=20%"]["aggregate"]
    assert {"RATED Full", "RATED (task-success feedback)", "Global D-UCB (per-arm γ=0.95)"} <= set(agg)
    assert {"Word overlap (plug-in)", "Two strikes (plug-in)"} <= set(agg)
    for name, row in agg.items():  # no policy beats the oracle, before or after the failures
        assert row["post_fail_sr"]["mean"] <= row["oracle_post_fail_sr"]["mean"] + 1e-12, name
    ci = real["rho=20%"]["ci"]["post"]["RATED Full"]
    assert ci["ci_low"] <= agg["RATED Full"]["post_fail_sr"]["mean"] <= ci["ci_high"]
    assert (
        real["recovering (rho=20%)"]["aggregate"]["HealthCheckBlacklist"]["recovered_sr"]["mean"] is not None
    )
    assert len(report["latency"]["rows"]) == 6 and report["latency"]["distinct_queries"] == 8
    assert len(report["sensitivity"]["weights"]["cells"]) == 9
    md = (eval_dir / "report.md").read_text()
    assert "Table 1" in md and "Table 2" in md and "Table 3" in md
    assert "SMOKE TEST" in md and "AS (paper)" in md and "Pre-fail SR" in md
    assert "### syn_tool: EcoAgent-Syn, tool-disjoint split" in md and "### mcp:" in md
    assert "### mcp_server: MCP example prompts, server-level labels" in md
    assert "**Construction advantage**" in md and "no part in construction" in md
    # the train stage's held-out comparison is carried into the report as it is
    assert report["fine_tuning"]["held_out"]["syn_tool_split_test"]["mrr_gain"] == -0.05
    assert "fine-tuned encoder vs its backbone" in md and "**it lost: noise**" in md
    assert list(eval_dir.glob("*.png"))
    assert (tiny_out / ".done" / "evaluate.json").exists()

    # same seeds, same numbers (latency aside)
    again = pipeline.run(tiny_out, profile, **{**OPTIONS, **plugins, "latency": False, "sensitivity": False})
    assert {k: v for k, v in again.items() if k != "seconds"} == {
        k: v for k, v in stats.items() if k != "seconds"
    }
    second = json.loads((eval_dir / "report.json").read_text())
    assert _same_numbers(second["simulation"], report["simulation"])
    assert second["offline"]["rows"] == report["offline"]["rows"]


def test_simulation_numbers_do_not_depend_on_the_workers(tiny_out: Path) -> None:
    """Two forked workers (the cold-start runs stay in this process) give the numbers of one process."""
    from rated.evaluation import pipeline

    profile = get_profile("embedded")
    options = {**OPTIONS, "latency": False, "sensitivity": False, "streams": ("real",), "seeds": 2}
    pipeline.run(tiny_out, profile, workers=2, **options)
    forked = json.loads((tiny_out / "eval" / "report.json").read_text())["simulation"]
    assert {"rho=20%", "cold start (rho=20%, +10% new tools)"} <= set(forked["real"]["scenarios"])
    pipeline.run(tiny_out, profile, workers=1, **options)
    here = json.loads((tiny_out / "eval" / "report.json").read_text())["simulation"]
    assert _same_numbers(forked, here)


def _same_numbers(a: dict, b: dict) -> bool:
    """Equal up to the per-scenario wall-clock ``seconds``."""

    def strip(x: object) -> object:
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k != "seconds"}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x

    return strip(a) == strip(b)


def test_bad_plugin_specs_fail_clearly() -> None:
    from rated.evaluation.plugins import load_factory

    with pytest.raises(ValueError, match="module:Factory"):
        load_factory("no_colon")
    with pytest.raises(ValueError, match="cannot import"):
        load_factory("no_such_module_xyz:F")
    with pytest.raises(ValueError, match="has no"):
        load_factory("json:NoSuchFactory")


def test_the_published_configs_have_the_beir_layout(tiny_out: Path) -> None:
    """What an MTEB retrieval task reads: corpus (_id, title, text), queries (_id, text) and qrels
    (query-id, corpus-id, score) whose ids all resolve."""
    from publish.configs import build_configs

    configs, _ = build_configs(ArtifactDir(tiny_out))
    corpus = pl.concat(list(configs["corpus"].splits.values()))
    queries = pl.concat(list(configs["queries"].splits.values()))
    assert {"_id", "title", "text"} <= set(corpus.columns) and {"_id", "text"} <= set(queries.columns)
    assert corpus["_id"].n_unique() == corpus.height == len(TOOLS)
    for split, qrels in configs["qrels"].splits.items():
        assert qrels.columns[:3] == ["query-id", "corpus-id", "score"], split
        assert set(qrels["corpus-id"]) <= set(corpus["_id"]) and set(qrels["query-id"]) <= set(queries["_id"])
        assert (qrels["score"] > 0).all()


def test_no_matching_queries_gives_a_report_that_says_so(tmp_path: Path) -> None:
    from rated.evaluation import pipeline

    art = ArtifactDir(tmp_path)
    tools = [{"tool_id": "test:a", "name": "A", "description": "does a", "tags": [], "prior": 0.5}]
    write_parquet(rows_to_frame(tools, TOOL_SCHEMA), art.tools)
    pairs = pl.DataFrame(
        {"query_id": ["q"], "query": ["do b"], "tool_id": ["test:unknown"], "split": ["test"]}
    )
    write_parquet(pairs, art.syn_positives)
    write_parquet(pairs, art.real_pairs)
    stats = pipeline.run(tmp_path, get_profile("embedded"), seeds=1)
    assert stats["evaluated_queries"] == 0
    report = json.loads((tmp_path / "eval" / "report.json").read_text())
    assert "nothing was measured" in report["skipped"]
    assert (tmp_path / ".done" / "evaluate.json").exists()

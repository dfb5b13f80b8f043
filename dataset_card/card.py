"""The dataset card: rendered from the built data and the manifest, merged with the card already published.

Every number in the card comes from ``stats.compute_stats`` or the manifest; the
prose lives in ``template.md`` (and ``licence.md``). Rendering merges with the
card the repository already has: YAML keys we do not set are kept, ``configs``
and ``dataset_info`` are merged by config name (so a config another upload
wrote, e.g. ``reference_judgments``, survives; ``card_metadata``), and the
changelog keeps every earlier entry (``card_changelog``). ``card_validation``
checks the result with huggingface_hub's card parser and datasets' own readers
of ``configs``/``dataset_info``. This module holds the body and the whole card.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from datasets import DatasetInfo
from huggingface_hub import DatasetCard

from rqbench.dataset_card.card_base import CardError, CardSettings, fill, table_rows
from rqbench.dataset_card.card_changelog import changelog_entry, merged_changelog
from rqbench.dataset_card.card_fields import fields_tables
from rqbench.dataset_card.card_metadata import card_metadata, merge_metadata
from rqbench.dataset_card.features import CONFIG_RECORDS
from rqbench.dataset_card.stats import LENGTH_LABELS, DatasetStats, Spread, summary_rows
from rqbench.dataset_card.versions import ReleaseInfo
from rqbench.records import BuildManifest

TEMPLATE = Path(__file__).with_name("template.md")
LICENCE_TEMPLATE = Path(__file__).with_name("licence.md")


def _fmt(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x:g}" if float(x).is_integer() else f"{x:.2f}"


def load_code(release: ReleaseInfo, settings: CardSettings) -> str:
    if settings.target == "hub":
        code = (
            "from datasets import load_dataset\n\n"
            f'REPO, REVISION = "{settings.repo}", "{release.tag}"\n'
            'rqs = load_dataset(REPO, "rqs", revision=REVISION, split="test")\n'
            'instances = load_dataset(REPO, "instances", revision=REVISION, split="test")\n'
            'cited = load_dataset(REPO, "cited_papers", revision=REVISION, split="test")\n'
            'papers = load_dataset(REPO, "papers", revision=REVISION, split="test")\n'
            'print(rqs[0]["rq"], instances[0]["background_paper_ids"])\n'
        )
        note = ""
    else:
        code = (
            "from datasets import load_dataset\n\n"
            "from rqbench.dataset_card.repo import materialize\n\n"
            f'path, commit = materialize({settings.repo!r}, "{release.tag}")\n'
            'rqs = load_dataset(str(path), "rqs", split="test")\n'
            'instances = load_dataset(str(path), "instances", split="test")\n'
            'cited = load_dataset(str(path), "cited_papers", split="test")\n'
            'papers = load_dataset(str(path), "papers", split="test")\n'
            'print(rqs[0]["rq"], instances[0]["background_paper_ids"])\n'
        )
        note = (
            "\nThis copy is a local git repository with one tag per version. `load_dataset` cannot pin a "
            "revision of a local folder, so `materialize` exports the tag's files once into a cache folder; "
            '`load_dataset(<the folder>, "rqs")` on the repository itself reads the newest version.'
        )
    return f"```python\n{code}```\n{note}"


def _stage_rows(manifest: BuildManifest) -> str:
    rows = []
    for s in manifest.stages:
        ps = f"{s.prompt_set.name} `{s.prompt_set.hash[:15]}`" if s.prompt_set else None
        rows.append((s.stage, s.model, ps, s.items_in, s.items_out, s.skipped, s.llm_calls, s.cache_hits))
    return table_rows(rows) if rows else "| (no stages recorded) | | | | | | | |"


def _inline_json(value: Any) -> str:
    return f"`{json.dumps(value, sort_keys=True, default=str)}`" if value else "none recorded"


def _funnel(funnel: dict[str, Any]) -> str:
    """The filtering funnel of ``build/funnel.json``: totals, then one row per rule when it lists them."""
    skip = {"kind", "schema_version"}
    flat = {k: v for k, v in funnel.items() if isinstance(v, (int, float, str, bool)) and k not in skip}
    rules = [r for r in funnel.get("rules", []) if isinstance(r, dict) and "rule" in r]
    if not flat and not rules:
        return ""
    parts = ["Filtering funnel (from `build/funnel.json`):"]
    if flat:
        parts.append("| item | value |\n|---|---|\n" + table_rows(flat.items()))
    if rules:
        parts.append(
            "| rule | applied | removed | remaining |\n|---|---|---|---|\n"
            + table_rows((r["rule"], r.get("applied"), r.get("removed_total"), r.get("remaining")) for r in rules)
        )
    return "\n\n".join(parts)


def _length_rows(lengths: dict[str, Spread]) -> str:
    return table_rows(
        (LENGTH_LABELS.get(k, k), s.count, _fmt(s.mean), _fmt(s.median), _fmt(s.min), _fmt(s.max))
        for k, s in lengths.items()
    )


def _citation(settings: CardSettings, release: ReleaseInfo) -> str:
    where = f"https://huggingface.co/datasets/{settings.repo}" if settings.target == "hub" else settings.repo
    return (
        f"@misc{{{settings.citation_key},\n"
        f"  title = {{{settings.citation_title}}},\n"
        f"  note = {{RQ-Bench dataset, version {release.version}}},\n"
        f"  howpublished = {{\\url{{{where}}}}},\n"
        f"  year = {{{release.published_at.year}}}\n"
        "}"
    )


# Why a cited paper has no body text, in the card's words (the reasons are CitedPaper.no_full_text's names).
NO_TEXT_REASONS = {
    "no_local_source": "its LaTeX is not among the local sources (no match by arXiv id, by title, or as a version "
    "of the paper under another title)",
    "no_arxiv_id": "it is not in the local mirror and its bibliography entry gives no arXiv id to fetch it by",
    "no_source": "the build had neither a local sources folder nor downloads",
    "too_little_body_text": "its source holds less than 200 characters of body text",
    "no_bib_entry": "the citing paper's bibliography has no entry for it",
}
NO_TEXT_PREFIXES = {
    "parse_skipped:": "the parser could not read its source",
    "fetch_failed:": "its e-print could not be downloaded",
    "fetch_skipped:": "its e-print holds no usable LaTeX",
}


def no_text_reason(reason: str | None) -> str:
    """A cited paper's ``no_full_text`` in words, keeping the name."""
    if not reason:
        return "no reason recorded"
    words = NO_TEXT_REASONS.get(reason) or next((w for p, w in NO_TEXT_PREFIXES.items() if reason.startswith(p)), "")
    return f"{words} (`{reason}`)" if words else f"`{reason}`"


def cited_text_summary(s: DatasetStats) -> str:
    full, total = s.text_levels.get("full", 0), sum(s.text_levels.values())
    c = s.cited_contributions
    return (
        f"\n{full} of the {total} cited papers carry their body text ({s.cited_sections} sections in all), and "
        f"{s.background_with_text} of the {s.instances} evaluation instances have at least one of them among "
        f"their background papers. Their contributions: {c.get('extracted', 0)} extracted by an LLM from the "
        f"body text, {c.get('abstract', 0)} the abstract standing in, {c.get('none', 0)} none."
    )


def cited_text_notes(s: DatasetStats) -> str:
    if not s.cited_without_text:
        return "Every cited paper has its body text."
    lines = [
        f"- *{x.title}* (`{x.paper_id}`), {x.text_level} only: {no_text_reason(x.reason)}."
        for x in s.cited_without_text
    ]
    return (
        "Cited papers without body text count as background only where the build allowed it "
        "(`allow_abstract_only` in the build settings); they are linked from the RQs that cite them:\n\n"
        + "\n".join(lines)
    )


def influence_note(manifest: BuildManifest) -> str:
    """Whether the labeller's own labels made the influential citations, or the promotion fallback did."""
    counts, wanted = manifest.counts, manifest.settings.get("min_influential") or 0
    promoted, influential = counts.get("influence_promoted", 0), counts.get("influential_works")
    if not promoted:
        return "Influence: every citation counted as influential was labelled so by the labeller; none was promoted."
    of = f" of the {influential}" if influential is not None else ""
    return (
        f"Influence: {promoted}{of} citations counted as influential were promoted by the "
        f"`--min-influential {wanted}` fallback, not labelled influential by the labeller: when a paper has "
        f"fewer influential citations than that, its labelled citations are promoted in the builder's order "
        f"(those whose text the build can read first, then the most often cited) until it has {wanted}. Each "
        "keeps its own label and is marked `promoted` in the build's influence stage output."
    )


def verifier_note(models: Iterable[str]) -> str:
    from rqbench.demo import demo_names

    demo = demo_names(models)
    if not demo:
        return ""
    return (
        f"The verifier here is a demo model ({', '.join(f'`{m}`' for m in demo)}): its verdicts, and the "
        "approval rate below, show that the step runs, not whether the questions are addressed."
    )


def render_body(
    release: ReleaseInfo,
    stats: DatasetStats,
    manifest: BuildManifest,
    funnel: dict[str, Any],
    settings: CardSettings,
    existing_text: str | None,
) -> str:
    s, v = stats, stats.verification
    local_models = sorted({st.model for st in manifest.stages if st.model})
    sample_notice = ""
    limitations_extra = [f"- {x}" for x in settings.extra_limitations]
    if settings.sample:
        sample_notice = (
            "> **A sample for trying the tools, not for reporting results.** It was built on this machine by a "
            f"small local model ({', '.join(local_models) or 'the embedded model'}) from a handful of papers "
            "with small budgets. Its questions, gaps and labels are far weaker than a release built with "
            "frontier models; use it to run generation, judging and the leaderboard end to end."
        )
        limitations_extra.append(
            "- This sample's extraction and verification come from a 135M-parameter model: expect wrong "
            "labels, off-topic questions and a meaningless approval rate."
        )
    dropped = table_rows(sorted(s.rqs_dropped.items())) if s.rqs_dropped else ""
    dropped_table = "| reason | RQs |\n|---|---|\n" + dropped if dropped else "No RQ was dropped."
    malformed = table_rows(
        (kind.replace("_", " "), c.items, ", ".join(f"{r}: {n}" for r, n in c.rules.items()))
        for kind, c in s.malformed.items()
    )
    malformed_table = (
        "| kind | texts dropped | rules broken |\n|---|---|---|\n" + malformed
        if malformed
        else "The gate refused no text."
    )
    table1 = summary_rows(s)
    dev = release.dev_rule.get("dev_papers", [])
    values = {
        "pretty_name": settings.pretty_name,
        "sample_notice": sample_notice,
        "version": release.version,
        "tag": release.tag,
        "build_id": release.build_id,
        "built_at": release.built_at.date().isoformat(),
        "n_rqs": s.rqs,
        "n_papers": s.papers,
        "n_subfields": s.subfields,
        "load_code": load_code(release, settings),
        "config_rows": table_rows(
            (
                f"`{c}`",
                (m.__doc__ or "").strip().splitlines()[0].replace("``", "`"),
                release.splits.get(c, {}).get("test", 0),
            )
            for c, m in CONFIG_RECORDS.items()
        ),
        "fields_tables": fields_tables(),
        "dev_seed": release.dev_rule.get("seed", ""),
        "dev_fraction": release.dev_rule.get("fraction", ""),
        "dev_papers": ", ".join(f"`{a}`" for a in dev) or "none",
        "split_rows": table_rows((f"`{c}`", sp, n) for c, splits in release.splits.items() for sp, n in splits.items()),
        "stage_rows": _stage_rows(manifest),
        "build_inputs": _inline_json(manifest.inputs),
        "build_settings": _inline_json(manifest.settings),
        "funnel_section": _funnel(funnel),
        "table1_rows": table_rows(table1),
        "dropped_rows": dropped_table,
        "malformed_rows": malformed_table,
        "length_rows": _length_rows(s.lengths),
        "subfield_rows": table_rows(
            (r.subfield, r.papers, r.rqs, r.rq_citation_links, r.unique_cited_papers, r.gap_statements)
            for r in s.by_subfield
        ),
        "novelty_rows": table_rows(s.novelty_types.items()),
        "text_level_rows": table_rows(s.text_levels.items()),
        "cited_text_summary": cited_text_summary(s),
        "cited_text_notes": cited_text_notes(s),
        "influence_note": influence_note(manifest),
        "verifier_note": verifier_note(v.models),
        "verifier_models": ", ".join(v.models) or "no verifier recorded",
        "verified": v.verified,
        "approved": v.approved,
        "approval_rate": f"{v.approval_rate:.1%}" if v.approval_rate is not None else "not available",
        "confidence_rows": table_rows(v.by_confidence.items()) if v.by_confidence else "| (none) | 0 |",
        "manual_n": len(v.manual_sample_ids),
        "manual_protocol": ", ".join(f"{k}={val}" for k, val in v.manual_sample_protocol.items())
        or "protocol not recorded",
        "manual_ids": " ".join(f"`{i}`" for i in v.manual_sample_ids) or "(no sample drawn)",
        "limitations_extra": "\n".join(limitations_extra),
        "licence_text": licence_text(settings),
        "citation": _citation(settings, release),
        "changelog": merged_changelog(existing_text, changelog_entry(release, stats)),
    }
    text = fill(TEMPLATE.read_text(encoding="utf-8"), values, str(TEMPLATE))
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def licence_text(settings: CardSettings) -> str:
    return fill(
        LICENCE_TEMPLATE.read_text(encoding="utf-8"),
        {"annotation_licence": settings.annotation_licence},
        str(LICENCE_TEMPLATE),
    ).strip()


def render_card(
    release: ReleaseInfo,
    stats: DatasetStats,
    infos: dict[str, DatasetInfo],
    manifest: BuildManifest,
    funnel: dict[str, Any],
    settings: CardSettings,
    existing_text: str | None = None,
) -> str:
    """The full README.md: merged YAML header, then the body from the template."""
    existing_meta: dict[str, Any] = {}
    if existing_text:
        try:
            existing_meta = DatasetCard(existing_text, ignore_metadata_errors=True).data.to_dict()
        except Exception as exc:  # a broken header must not be silently replaced
            raise CardError(f"the repository's README.md cannot be parsed as a dataset card: {exc}") from exc
    meta = merge_metadata(existing_meta, card_metadata(release, stats, infos, settings))
    header = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000)
    body = render_body(release, stats, manifest, funnel, settings, existing_text)
    return f"---\n{header}---\n\n{body}"

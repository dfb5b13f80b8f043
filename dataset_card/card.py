"""The dataset card: rendered from the built data and the manifest, merged with the card already published.

Every number in the card comes from ``stats.compute_stats`` or the manifest; the
prose lives in ``template.md`` (and ``licence.md``). Rendering merges with the
card the repository already has: YAML keys we do not set are kept, ``configs``
and ``dataset_info`` are merged by config name (so a config another upload
wrote, e.g. ``reference_judgments``, survives), and the changelog keeps every
earlier entry. ``validate_card`` checks the result with huggingface_hub's card
parser and datasets' own readers of ``configs``/``dataset_info``.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import yaml
from datasets import DatasetInfo
from datasets.info import DatasetInfosDict
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCard, DatasetCardData
from pydantic import BaseModel

from rqbench.dataset_card.features import CONFIG_RECORDS, DEFAULT_CONFIG, config_features
from rqbench.dataset_card.field_docs import FIELD_DOCS
from rqbench.dataset_card.stats import LENGTH_LABELS, DatasetStats, Spread, size_category, summary_rows
from rqbench.dataset_card.versions import ReleaseAdditions, ReleaseInfo, Version
from rqbench.records import BuildManifest

TEMPLATE = Path(__file__).with_name("template.md")
LICENCE_TEMPLATE = Path(__file__).with_name("licence.md")
PLACEHOLDER = re.compile(r"\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}")
CHANGELOG_START = "<!-- rqbench:changelog:start -->"
CHANGELOG_END = "<!-- rqbench:changelog:end -->"
_ENTRY_RE = re.compile(r"^- \*\*v(?P<version>\d+\.\d+\.\d+)\*\*")

# Keys of the YAML header that this module owns; all others are left as found.
REQUIRED_KEYS = ("license", "task_categories", "language", "size_categories", "pretty_name", "tags",
                 "configs", "dataset_info")
SIZE_CATEGORIES = {"n<1K", "1K<n<10K", "10K<n<100K", "100K<n<1M", "1M<n<10M", "10M<n<100M", "100M<n<1B",
                   "1B<n<10B", "10B<n<100B", "100B<n<1T", "n>1T"}
REQUIRED_SECTIONS = ("## Summary", "## How to load", "## Configs and fields", "## Splits", "## How it was made",
                     "## Summary statistics", "## Cited papers' text", "## Verification", "## Limitations",
                     "## Licence of the texts", "## Citation", "## Changelog")


class CardError(ValueError):
    """A card that cannot be rendered or does not validate."""


class CardSettings(BaseModel):
    """What the card says that the data cannot: names, licence, where it lives."""

    repo: str = "ORG/rq-bench"
    target: Literal["hub", "local"] = "hub"
    pretty_name: str = "RQ-Bench"
    annotation_licence: str = "CC BY 4.0"
    license_name: str = "rq-bench-mixed"
    sample: bool = False
    notes: str = ""
    extra_limitations: list[str] = []
    citation_key: str = "rqbench"
    citation_title: str = "On the Limits of LLM-as-Judge for Scientific Novelty Assessment"


# -- filling a template -------------------------------------------------------


def fill(template: str, values: dict[str, Any], name: str) -> str:
    """Replace every ``{{name}}``; refuse a missing or an unused value so template and code agree."""
    wanted = set(PLACEHOLDER.findall(template))
    missing, extra = wanted - values.keys(), values.keys() - wanted
    if missing or extra:
        raise CardError(f"{name}: missing values {sorted(missing)}, unused values {sorted(extra)}")
    return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), template)


def _cell(value: Any) -> str:
    text = "—" if value is None or value == "" else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def _rows(rows: Iterable[Iterable[Any]]) -> str:
    lines = ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _fmt(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x:g}" if float(x).is_integer() else f"{x:.2f}"


# -- fields tables from the records ------------------------------------------


def _feature_type(feature: Any) -> str:
    from datasets import List, Value

    if isinstance(feature, Value):
        return feature.dtype
    if isinstance(feature, List):
        return f"list<{_feature_type(feature.feature)}>"
    if isinstance(feature, dict):
        return "struct"
    return type(feature).__name__


def _field_doc(model: type[BaseModel], name: str) -> str:
    desc = model.model_fields[name].description
    return desc or FIELD_DOCS.get(f"{model.__name__}.{name}", "")


def field_rows(model: type[BaseModel], features: dict[str, Any], prefix: str = "") -> list[tuple[str, str, str]]:
    """(field path, feature type, meaning) for every field, nested ones as ``a.b`` / ``a[].b``."""
    import typing

    from datasets import List

    from rqbench.dataset_card.features import _unwrap_optional

    out = []
    for name, feature in features.items():
        path = f"{prefix}{name}"
        out.append((path, _feature_type(feature), _field_doc(model, name)))
        inner, sep = feature, "."
        if isinstance(feature, List) and isinstance(feature.feature, dict):
            inner, sep = feature.feature, "[]."
        if isinstance(inner, dict):
            tp = _unwrap_optional(model.model_fields[name].annotation)
            if typing.get_origin(tp) is list:
                tp = _unwrap_optional(typing.get_args(tp)[0])
            if isinstance(tp, type) and issubclass(tp, BaseModel):
                out.extend(field_rows(tp, inner, f"{path}{sep}"))
    return out


def undocumented_fields() -> list[str]:
    """Published fields with no meaning for the card (a test keeps this empty)."""
    missing = []
    for config, model in CONFIG_RECORDS.items():
        for path, _, doc in field_rows(model, config_features(config)):
            if not doc.strip():
                missing.append(f"{config}.{path}")
    return missing


def fields_tables() -> str:
    parts = []
    for config, model in CONFIG_RECORDS.items():
        rows = field_rows(model, config_features(config))
        parts.append(
            f"### `{config}` ({model.__name__})\n\n| field | type | meaning |\n|---|---|---|\n"
            + _rows((f"`{p}`", t, d) for p, t, d in rows)
        )
    return "\n\n".join(parts)


# -- metadata -----------------------------------------------------------------


def configs_metadata(splits: dict[str, dict[str, int]]) -> list[dict[str, Any]]:
    """The ``configs:`` entries: one per config, parquet files per split, ``rqs`` the default."""
    out = []
    for config in CONFIG_RECORDS:
        entry: dict[str, Any] = {"config_name": config}
        if config == DEFAULT_CONFIG:
            entry["default"] = True
        entry["data_files"] = [
            {"split": split, "path": f"data/{config}/{split}-*.parquet"} for split in splits.get(config, {})
        ]
        out.append(entry)
    return out


def dataset_info_metadata(infos: dict[str, DatasetInfo]) -> list[dict[str, Any]]:
    """The ``dataset_info:`` entries, written by datasets' own serialiser."""
    data = DatasetCardData()
    DatasetInfosDict(infos).to_dataset_card_data(data)
    value = data.to_dict().get("dataset_info", [])
    return value if isinstance(value, list) else [value]


def card_metadata(release: ReleaseInfo, stats: DatasetStats, infos: dict[str, DatasetInfo],
                  settings: CardSettings) -> dict[str, Any]:
    tags = ["research-questions", "scientific-novelty", "llm-as-a-judge", "benchmark", "arxiv"]
    if settings.sample:
        tags.append("sample")
    return {
        "pretty_name": settings.pretty_name,
        "license": "other",
        "license_name": settings.license_name,
        "license_link": "LICENSE.md",
        "language": ["en"],
        "task_categories": ["text-generation"],
        "size_categories": [size_category(stats.rqs)],
        "annotations_creators": ["machine-generated"],
        "language_creators": ["found"],
        "source_datasets": ["original"],
        "tags": tags,
        "configs": configs_metadata(release.splits),
        "dataset_info": dataset_info_metadata(infos),
    }


def _by_name(entries: Any) -> dict[str, dict[str, Any]]:
    if isinstance(entries, dict):
        entries = [entries]
    out = {}
    for e in entries or []:
        if isinstance(e, dict):
            out[e.get("config_name", "default")] = e
    return out


def merge_metadata(existing: dict[str, Any] | None, ours: dict[str, Any]) -> dict[str, Any]:
    """Ours over the existing header; configs/dataset_info merged by config name; tags unioned."""
    merged = dict(existing or {})
    for key, value in ours.items():
        if key in ("configs", "dataset_info"):
            old, new = _by_name(merged.get(key)), _by_name(value)
            kept = [e for name, e in old.items() if name not in new]
            if key == "configs" and any(e.get("default") for e in new.values()):
                kept = [{k: v for k, v in e.items() if k != "default"} for e in kept]
            merged[key] = list(new.values()) + kept
        elif key == "tags":
            merged[key] = list(dict.fromkeys(list(value) + list(merged.get(key) or [])))
        else:
            merged[key] = value
    return merged


# -- the changelog ------------------------------------------------------------


def changelog_entries(card_text: str | None) -> list[str]:
    """The entries of an existing card's changelog (one line each), in the order found."""
    if not card_text or CHANGELOG_START not in card_text:
        return []
    body = card_text.split(CHANGELOG_START, 1)[1].split(CHANGELOG_END, 1)[0]
    return [line for line in body.splitlines() if _ENTRY_RE.match(line)]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def additions_text(added: ReleaseAdditions) -> str:
    """The changelog's account of what a release added: the base it extends, the months, the counts by rule."""
    months = "; ".join(f"{m}: {_plural(c.get('papers', 0), 'paper')}, {c.get('rqs', 0)} RQs"
                       for m, c in added.months.items()) or "none"  # fmt: skip
    if added.extends:
        parts = [f"Extends v{added.extends.removeprefix('v')} with its rows unchanged.", f"Added {months}."]
    else:
        parts = [f"Built whole; papers by first-version month: {months}."]
    if added.removed_by_rule:
        parts.append("Papers removed by keep rule: " + ", ".join(f"{r} {n}" for r, n in added.removed_by_rule.items())
                     + ".")
    if added.rqs_dropped:
        parts.append("RQs dropped: " + ", ".join(f"{r} {n}" for r, n in added.rqs_dropped.items()) + ".")
    return " ".join(p for p in parts if p)


def changelog_entry(release: ReleaseInfo, stats: DatasetStats) -> str:
    notes = f" {release.notes.strip()}" if release.notes.strip() else ""
    added = f" {additions_text(release.added)}" if release.added is not None else ""
    return (
        f"- **v{release.version}** ({release.published_at.date().isoformat()}): build `{release.build_id}`, "
        f"{stats.rqs} RQs from {stats.papers} papers, {stats.unique_cited_papers} cited papers; "
        f"schema `{release.schema_fingerprint}`.{added}{notes}"
    )


def merged_changelog(existing: str | None, entry: str) -> str:
    """Earlier entries plus this one (replacing an entry of the same version), newest first."""
    version = _ENTRY_RE.match(entry).group("version")  # type: ignore[union-attr]
    entries = [e for e in changelog_entries(existing) if _ENTRY_RE.match(e).group("version") != version]  # type: ignore[union-attr]
    entries.append(entry)
    entries.sort(key=lambda e: Version.parse(_ENTRY_RE.match(e).group("version")), reverse=True)  # type: ignore[union-attr]
    return "\n".join(entries)


# -- the body -----------------------------------------------------------------


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
            "`load_dataset(<the folder>, \"rqs\")` on the repository itself reads the newest version."
        )
    return f"```python\n{code}```\n{note}"


def _stage_rows(manifest: BuildManifest) -> str:
    rows = []
    for s in manifest.stages:
        ps = f"{s.prompt_set.name} `{s.prompt_set.hash[:15]}`" if s.prompt_set else None
        rows.append((s.stage, s.model, ps, s.items_in, s.items_out, s.skipped, s.llm_calls, s.cache_hits))
    return _rows(rows) if rows else "| (no stages recorded) | | | | | | | |"


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
        parts.append("| item | value |\n|---|---|\n" + _rows(flat.items()))
    if rules:
        parts.append("| rule | applied | removed | remaining |\n|---|---|---|---|\n" + _rows(
            (r["rule"], r.get("applied"), r.get("removed_total"), r.get("remaining")) for r in rules))
    return "\n\n".join(parts)


def _length_rows(lengths: dict[str, Spread]) -> str:
    return _rows(
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
    return (f"\n{full} of the {total} cited papers carry their body text ({s.cited_sections} sections in all), and "
            f"{s.background_with_text} of the {s.instances} evaluation instances have at least one of them among "
            f"their background papers. Their contributions: {c.get('extracted', 0)} extracted by an LLM from the "
            f"body text, {c.get('abstract', 0)} the abstract standing in, {c.get('none', 0)} none.")


def cited_text_notes(s: DatasetStats) -> str:
    if not s.cited_without_text:
        return "Every cited paper has its body text."
    lines = [f"- *{x.title}* (`{x.paper_id}`), {x.text_level} only: {no_text_reason(x.reason)}."
             for x in s.cited_without_text]  # fmt: skip
    return ("Cited papers without body text count as background only where the build allowed it "
            "(`allow_abstract_only` in the build settings); they are linked from the RQs that cite them:\n\n"
            + "\n".join(lines))


def influence_note(manifest: BuildManifest) -> str:
    """Whether the labeller's own labels made the influential citations, or the promotion fallback did."""
    counts, wanted = manifest.counts, manifest.settings.get("min_influential") or 0
    promoted, influential = counts.get("influence_promoted", 0), counts.get("influential_works")
    if not promoted:
        return "Influence: every citation counted as influential was labelled so by the labeller; none was promoted."
    of = f" of the {influential}" if influential is not None else ""
    return (f"Influence: {promoted}{of} citations counted as influential were promoted by the "
            f"`--min-influential {wanted}` fallback, not labelled influential by the labeller: when a paper has "
            f"fewer influential citations than that, its labelled citations are promoted in the builder's order "
            f"(those whose text the build can read first, then the most often cited) until it has {wanted}. Each "
            "keeps its own label and is marked `promoted` in the build's influence stage output.")


def verifier_note(models: Iterable[str]) -> str:
    from rqbench.demo import demo_names

    demo = demo_names(models)
    if not demo:
        return ""
    return (f"The verifier here is a demo model ({', '.join(f'`{m}`' for m in demo)}): its verdicts, and the "
            "approval rate below, show that the step runs, not whether the questions are addressed.")


def render_body(release: ReleaseInfo, stats: DatasetStats, manifest: BuildManifest, funnel: dict[str, Any],
                settings: CardSettings, existing_text: str | None) -> str:
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
    dropped = _rows(sorted(s.rqs_dropped.items())) if s.rqs_dropped else ""
    dropped_table = "| reason | RQs |\n|---|---|\n" + dropped if dropped else "No RQ was dropped."
    malformed = _rows((kind.replace("_", " "), c.items, ", ".join(f"{r}: {n}" for r, n in c.rules.items()))
                      for kind, c in s.malformed.items())  # fmt: skip
    malformed_table = ("| kind | texts dropped | rules broken |\n|---|---|---|\n" + malformed if malformed
                       else "The gate refused no text.")  # fmt: skip
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
        "config_rows": _rows(
            (f"`{c}`", (m.__doc__ or "").strip().splitlines()[0].replace("``", "`"),
             release.splits.get(c, {}).get("test", 0))
            for c, m in CONFIG_RECORDS.items()
        ),
        "fields_tables": fields_tables(),
        "dev_seed": release.dev_rule.get("seed", ""),
        "dev_fraction": release.dev_rule.get("fraction", ""),
        "dev_papers": ", ".join(f"`{a}`" for a in dev) or "none",
        "split_rows": _rows((f"`{c}`", sp, n) for c, splits in release.splits.items() for sp, n in splits.items()),
        "stage_rows": _stage_rows(manifest),
        "build_inputs": _inline_json(manifest.inputs),
        "build_settings": _inline_json(manifest.settings),
        "funnel_section": _funnel(funnel),
        "table1_rows": _rows(table1),
        "dropped_rows": dropped_table,
        "malformed_rows": malformed_table,
        "length_rows": _length_rows(s.lengths),
        "subfield_rows": _rows(
            (r.subfield, r.papers, r.rqs, r.rq_citation_links, r.unique_cited_papers, r.gap_statements)
            for r in s.by_subfield
        ),
        "novelty_rows": _rows(s.novelty_types.items()),
        "text_level_rows": _rows(s.text_levels.items()),
        "cited_text_summary": cited_text_summary(s),
        "cited_text_notes": cited_text_notes(s),
        "influence_note": influence_note(manifest),
        "verifier_note": verifier_note(v.models),
        "verifier_models": ", ".join(v.models) or "no verifier recorded",
        "verified": v.verified,
        "approved": v.approved,
        "approval_rate": f"{v.approval_rate:.1%}" if v.approval_rate is not None else "not available",
        "confidence_rows": _rows(v.by_confidence.items()) if v.by_confidence else "| (none) | 0 |",
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
    return fill(LICENCE_TEMPLATE.read_text(encoding="utf-8"), {"annotation_licence": settings.annotation_licence},
                str(LICENCE_TEMPLATE)).strip()


def render_card(release: ReleaseInfo, stats: DatasetStats, infos: dict[str, DatasetInfo], manifest: BuildManifest,
                funnel: dict[str, Any], settings: CardSettings, existing_text: str | None = None) -> str:
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


# -- validation ---------------------------------------------------------------


def _files_matching(tree: Path, pattern: str) -> list[str]:
    files = [p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file() and ".git" not in p.parts]
    return [f for f in files if fnmatch.fnmatch(f, pattern)]


def validate_card(text: str, *, tree: Path | None = None, version: str | None = None) -> list[str]:
    """Problems of a card, one per line (empty = valid).

    Parses with huggingface_hub's ``DatasetCard`` (strict metadata), reads
    ``configs`` and ``dataset_info`` with datasets' own parsers, checks that our
    configs declare exactly the features of the records, that every data_files
    pattern matches a file in ``tree``, and that the body has every section, no
    unfilled placeholder, and the changelog entry of ``version``.
    """
    problems: list[str] = []
    try:
        card = DatasetCard(text, ignore_metadata_errors=False)
    except Exception as exc:
        return [f"README.md: not a valid dataset card: {exc}"]
    data: DatasetCardData = card.data
    meta = data.to_dict()
    for key in REQUIRED_KEYS:
        if not meta.get(key):
            problems.append(f"README.md: metadata key {key!r} is missing or empty")
    if meta.get("license") == "other" and not (meta.get("license_name") and meta.get("license_link")):
        problems.append("README.md: license 'other' needs license_name and license_link")
    for cat in meta.get("size_categories") or []:
        if cat not in SIZE_CATEGORIES:
            problems.append(f"README.md: size_categories value {cat!r} is not one the Hub knows")
    try:
        configs = MetadataConfigs.from_dataset_card_data(data)
        infos = DatasetInfosDict.from_dataset_card_data(data)
    except Exception as exc:
        return problems + [f"README.md: configs/dataset_info not readable by datasets: {exc}"]
    defaults = [name for name, c in configs.items() if c.get("default")]
    if len(defaults) != 1:
        problems.append(f"README.md: exactly one config must be the default, found {defaults}")
    for name in CONFIG_RECORDS:
        if name not in configs:
            problems.append(f"README.md: configs has no {name!r}")
            continue
        info = infos.get(name)
        if info is None or info.features is None:
            problems.append(f"README.md: dataset_info has no features for {name!r}")
        elif info.features != config_features(name):
            problems.append(f"README.md: dataset_info features of {name!r} differ from the {name} records")
        if tree is not None:
            for df in configs[name].get("data_files") or []:
                if not _files_matching(tree, df["path"]):
                    problems.append(f"README.md: config {name!r} split {df['split']!r}: no file matches {df['path']}")
    body = card.text
    for section in REQUIRED_SECTIONS:
        if section not in body:
            problems.append(f"README.md: section {section!r} is missing")
    left = sorted(set(PLACEHOLDER.findall(body)))
    if left:
        problems.append(f"README.md: unfilled placeholders {left}")
    if version is not None and not any(e.startswith(f"- **v{version}**") for e in changelog_entries(text)):
        problems.append(f"README.md: the changelog has no entry for v{version}")
    return problems

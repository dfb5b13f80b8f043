"""The model catalog: specs, reasoning settings, context windows, token counts and judge resolution.

Most tests put a stand-in for litellm behind ``catalog.litellm_module`` so they check the
catalog's own rules; one checks the real map, and two check that litellm stays out of
``evaluate/`` and out of every import until a model is asked about.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from rqbench.llm import LLM, catalog
from rqbench.llm.local_model import DEFAULT_LOCAL_MODEL, LOCAL_MODELS

ROOT = Path(__file__).resolve().parent.parent


class FakeLitellm:
    """Answers for the models in ``known``; raises, as litellm does, for the rest."""

    def __init__(self, known: dict[str, dict]):
        self.known = known
        self.suppress_debug_info = False

    def _info(self, model: str) -> dict:
        if model not in self.known:
            raise ValueError(f"This model isn't mapped yet. model={model}")
        return self.known[model]

    def supports_reasoning(self, model: str) -> bool:
        return bool(self._info(model).get("reasoning"))

    def get_model_info(self, model: str) -> dict:
        return self._info(model)

    def token_counter(self, model: str, text: str | None = None, messages: list | None = None) -> int:
        self._info(model)
        words = text.split() if text is not None else [w for m in messages for w in m["content"].split()]
        return len(words)


@pytest.fixture
def fake(monkeypatch) -> FakeLitellm:
    lib = FakeLitellm(
        {
            "prov/thinker": {"reasoning": True, "max_input_tokens": 200_000},
            "prov/plain": {"reasoning": False, "max_input_tokens": None},
        }
    )
    monkeypatch.setattr(catalog, "litellm_module", lambda: lib)
    return lib


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("local", ("local", {})),
        ("local/gemma3-270m@temperature=0.7", ("local/gemma3-270m", {"temperature": "0.7"})),
        (
            "gemini/gemini-3.1-pro@reasoning_effort=low, temperature = 1",
            ("gemini/gemini-3.1-pro", {"reasoning_effort": "low", "temperature": "1"}),
        ),
        ("openai/gpt-5.5@", ("openai/gpt-5.5", {})),
    ],
)
def test_model_specs_parse_into_a_name_and_options(spec, expected):
    assert catalog.parse_model_spec(spec) == expected


def test_an_option_without_a_value_is_refused_naming_it():
    with pytest.raises(ValueError, match=r"'m@fast'.*'fast' is not key=value"):
        catalog.parse_model_spec("m@fast")


@pytest.mark.parametrize("spec", ["local", "local/smollm2-135m", "local@temperature=0.8", "local/x@max_tokens=9"])
def test_local_specs_name_the_embedded_model(spec):
    assert catalog.is_local(spec)


@pytest.mark.parametrize("spec", ["localai/m", "openai/local", "gemini/gemini-3.1-pro", "hosted_vllm/local/x"])
def test_other_specs_are_not_local(spec):
    assert not catalog.is_local(spec)


def test_local_model_id_defaults_for_plain_local():
    assert catalog.local_model_id("local") == DEFAULT_LOCAL_MODEL
    assert catalog.local_model_id("local@temperature=0.8") == DEFAULT_LOCAL_MODEL
    assert catalog.local_model_id("local/gemma3-270m@temperature=0.8") == "gemma3-270m"


def test_reasoning_support_is_litellms_answer_and_false_for_the_unknown(fake):
    assert catalog.supports_reasoning("prov/thinker") is True
    assert catalog.supports_reasoning("prov/plain") is False
    assert catalog.supports_reasoning("prov/never-heard-of") is False
    assert catalog.supports_reasoning("local") is False


def test_context_window_of_the_embedded_model_is_its_n_ctx(fake):
    assert catalog.context_window("local") == LOCAL_MODELS[DEFAULT_LOCAL_MODEL].n_ctx == 8192
    assert catalog.context_window("local/gemma3-270m@temperature=0.7") == LOCAL_MODELS["gemma3-270m"].n_ctx
    assert catalog.context_window("local/no-such-model") is None


def test_context_window_of_a_hosted_model_comes_from_litellm_or_is_unknown(fake):
    assert catalog.context_window("prov/thinker") == 200_000
    assert catalog.context_window("prov/thinker@reasoning_effort=low") == 200_000
    assert catalog.context_window("prov/plain") is None  # in the map without a window
    assert catalog.context_window("prov/never-heard-of") is None


def test_context_window_reads_litellms_real_model_map():
    assert catalog.context_window("openai/gpt-4o") == 128_000
    assert catalog.context_window("hosted_vllm/not/a/model") is None


def test_the_estimate_is_ceil_chars_over_four():
    assert [catalog.estimate_tokens("x" * n) for n in (0, 1, 4, 5, 8, 9)] == [0, 1, 1, 2, 2, 3]


def test_token_counts_use_litellm_for_a_model_and_the_estimate_otherwise(fake):
    text = "one two three four five six"  # 27 characters, 6 words
    assert catalog.count_tokens("prov/plain", text=text) == 6
    assert catalog.count_tokens("prov/plain", messages=[{"role": "user", "content": text}]) == 6
    for model in (None, catalog.ESTIMATE, "local", "local/gemma3-270m"):
        assert catalog.count_tokens(model, text=text) == 7, model
    # litellm cannot count for this model: the estimate, over the messages' text
    msgs = [{"role": "system", "content": "x" * 10}, {"role": "user", "content": "y" * 7}]
    assert catalog.count_tokens("prov/never-heard-of", messages=msgs) == 5
    with pytest.raises(ValueError, match="either text or messages"):
        catalog.count_tokens("prov/plain")
    with pytest.raises(ValueError, match="either text or messages"):
        catalog.count_tokens("prov/plain", text="a", messages=[])


def test_judges_get_high_reasoning_only_where_the_model_has_it_and_the_spec_is_silent(fake):
    llm = LLM(dry_run=True)
    assert catalog.resolve_judge("prov/thinker", llm)[0] == "prov/thinker@reasoning_effort=high"
    spec, cfg = catalog.resolve_judge("prov/thinker@temperature=0.5", llm)
    assert spec == "prov/thinker@temperature=0.5,reasoning_effort=high"
    assert cfg.reasoning_effort == "high" and cfg.temperature == 0.5
    assert catalog.resolve_judge("prov/thinker@reasoning_effort=low", llm)[0] == "prov/thinker@reasoning_effort=low"
    assert catalog.resolve_judge("prov/plain", llm)[0] == "prov/plain"
    spec, cfg = catalog.resolve_judge("local", llm)
    assert spec == "local" and cfg.local and cfg.reasoning_effort is None


@pytest.mark.parametrize(
    ("spec", "label", "expected"),
    [
        ("local", f"local/{DEFAULT_LOCAL_MODEL}", True),
        ("local@temperature=0.7", f"local/{DEFAULT_LOCAL_MODEL}@temperature=0.7", True),
        ("local@temperature=0.7", f"local/{DEFAULT_LOCAL_MODEL}", False),
        ("prov/thinker", "prov/thinker@reasoning_effort=high", True),  # what resolution added
        ("prov/thinker", "prov/thinker@temperature=1", False),
        ("prov/thinker", "prov/plain", False),
    ],
)
def test_a_results_label_matches_the_spec_it_was_resolved_from(spec, label, expected):
    assert catalog.spec_matches(spec, label) is expected


def _imported_modules(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_nothing_under_evaluate_imports_litellm():
    """Model facts come from rqbench.llm.catalog; evaluate/ never reaches for litellm itself."""
    files = sorted((ROOT / "evaluate").rglob("*.py"))
    assert len(files) > 10
    offenders = [
        str(p.relative_to(ROOT))
        for p in files
        if any(m == "litellm" or m.startswith("litellm.") for m in _imported_modules(p))
    ]
    assert offenders == []


def test_the_checker_sees_a_litellm_import(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from litellm.utils import token_counter\n    return token_counter\n")
    assert "litellm.utils" in _imported_modules(probe)


def test_importing_the_catalog_and_the_evaluation_code_does_not_import_litellm():
    code = (
        "import sys\n"
        "import rqbench.llm.catalog, rqbench.llm.client, rqbench.evaluate.benchmark.background, rqbench.evaluate.judge.run\n"
        "print('litellm' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"


# --------------------------------------------------------------------------
# the paper's models, reply budgets and generators
# --------------------------------------------------------------------------


def test_the_catalog_knows_the_paper_judges_from_the_installed_map_offline():
    """gemini-3.1-pro's window is missing from litellm's map (PAPER_MODEL_FACTS fills it); deepseek-v4-pro's is there."""
    for name in ("gemini/gemini-3.1-pro", "deepseek/deepseek-v4-pro", "gemini/gemini-3-flash"):
        assert catalog.supports_reasoning(name) is True
        assert catalog.context_window(name) >= 1_000_000
        assert catalog.reply_budget(name) == catalog.REASONING_REPLY_TOKENS
    assert catalog.litellm_module().get_model_info("gemini/gemini-3.1-pro").get("max_input_tokens") is None
    assert "deepseek/deepseek-v4-pro" not in catalog.PAPER_MODEL_FACTS  # litellm's own answer is used
    assert catalog.context_window("deepseek/deepseek-v4-pro") == 1_000_000


def test_reply_budgets_leave_room_for_reasoning_where_the_model_reasons(fake):
    assert catalog.reply_budget("prov/thinker") == catalog.REASONING_REPLY_TOKENS  # no output limit known
    fake.known["prov/short"] = {"reasoning": True, "max_output_tokens": 8000}
    assert catalog.reply_budget("prov/short") == 8000  # the model's own limit when lower
    fake.known["prov/nowindow"] = {"reasoning": True}
    assert catalog.reply_budget("prov/nowindow") == catalog.ASSUMED_WINDOW_TOKENS // 2  # room left for the input
    assert catalog.input_room("prov/nowindow", catalog.reply_budget("prov/nowindow")).tokens > 8000
    assert catalog.reply_budget("prov/plain") == catalog.DEFAULT_REPLY_TOKENS
    assert catalog.reply_budget("prov/never-heard-of") == catalog.DEFAULT_REPLY_TOKENS
    assert catalog.reply_budget("local") == catalog.LOCAL_REPLY_TOKENS
    llm = LLM(dry_run=True)
    assert llm.model("prov/thinker").max_tokens == catalog.REASONING_REPLY_TOKENS
    assert llm.model("prov/thinker@max_tokens=100").max_tokens == 100
    assert llm.model("prov/plain").max_tokens == catalog.DEFAULT_REPLY_TOKENS


def test_a_spec_can_leave_the_temperature_to_the_vendor(fake):
    llm = LLM(dry_run=True)
    cfg = llm.model("prov/plain@temperature=default")
    assert cfg.temperature is None and cfg.cache_identity()["temperature"] is None
    assert llm.model("prov/plain").temperature == 0.0
    with pytest.raises(ValueError):
        llm.model("prov/plain@temperature=warm")


def test_generators_get_the_vendor_default_and_the_highest_reasoning_unless_the_spec_says_otherwise(fake):
    llm = LLM(dry_run=True)
    spec, cfg = catalog.resolve_generator("prov/thinker", llm)
    assert spec == "prov/thinker@temperature=default,reasoning_effort=high"
    assert cfg.temperature is None and cfg.reasoning_effort == "high" and cfg.name == spec
    assert cfg.max_tokens == catalog.REASONING_REPLY_TOKENS and llm.model(spec) is cfg
    spec, cfg = catalog.resolve_generator("prov/thinker@temperature=0.3,reasoning_effort=low", llm)
    assert spec == "prov/thinker@temperature=0.3,reasoning_effort=low"
    assert (cfg.temperature, cfg.reasoning_effort) == (0.3, "low")
    spec, cfg = catalog.resolve_generator("prov/plain", llm)
    assert spec == "prov/plain@temperature=default" and cfg.reasoning_effort is None
    spec, cfg = catalog.resolve_generator("local@temperature=0.8", llm)  # the embedded model: its own settings
    assert spec == "local@temperature=0.8" and cfg.temperature == 0.8 and cfg.local


def test_resolution_derives_from_a_registered_config_too(fake, scripted_server):
    """A config registered under its own name (tests, benchmarks) keeps its address when derived."""
    llm = LLM(dry_run=True)
    base = llm.register(scripted_server.model_config(name="prov/thinker", litellm_model="prov/thinker"))
    spec, cfg = catalog.resolve_judge("prov/thinker", llm)
    assert spec == "prov/thinker@reasoning_effort=high" and cfg.api_base == base.api_base
    assert cfg.temperature == 0.0 and cfg.reasoning_effort == "high"


def test_the_room_for_inputs_is_the_window_less_the_reply_and_the_prompt(fake):
    room = catalog.input_room("prov/thinker", 10_000)
    assert (room.window, room.source) == (200_000, "catalog")
    assert room.tokens == int((200_000 - 10_000 - catalog.PROMPT_ALLOWANCE_TOKENS) * catalog.ESTIMATE_MARGIN)
    assert catalog.input_room("prov/thinker", 0, context_tokens=20_000).source == "--context-tokens"
    unknown = catalog.input_room("prov/never-heard-of", 2048)
    assert (unknown.window, unknown.source) == (catalog.ASSUMED_WINDOW_TOKENS, "assumed")
    with pytest.raises(ValueError, match="leaves no room"):
        catalog.input_room("prov/thinker", 10_000, context_tokens=12_000)


# --------------------------------------------------------------------------
# knowledge cutoffs
# --------------------------------------------------------------------------


def test_a_cutoff_is_a_month_read_as_its_last_day_or_a_day():
    from datetime import date

    from rqbench.llm.catalog import parse_cutoff

    assert parse_cutoff("2025-01") == date(2025, 1, 31) and parse_cutoff("2024-02") == date(2024, 2, 29)
    assert parse_cutoff("2025-06-15") == date(2025, 6, 15)
    for bad in ("2025-13", "Jan 2025", "2025", "2025-02-30"):
        with pytest.raises(ValueError, match="is not a month YYYY-MM or a day YYYY-MM-DD"):
            parse_cutoff(bad)


def test_the_cutoff_option_leaves_the_spec_and_the_cache_key_alone():
    from datetime import date

    from rqbench.llm.catalog import split_cutoff

    assert split_cutoff("openai/gpt-5.5@cutoff=2025-12") == ("openai/gpt-5.5", date(2025, 12, 31))
    assert split_cutoff("local@temperature=0.8,cutoff=2024-06") == ("local@temperature=0.8", date(2024, 6, 30))
    assert split_cutoff("openai/gpt-5.5@temperature=0") == ("openai/gpt-5.5@temperature=0", None)
    with pytest.raises(ValueError, match="'soon' is not a month"):
        split_cutoff("m@cutoff=soon")


def test_catalog_cutoffs_each_name_a_vendor_document_and_unknown_stays_unknown():
    import re
    from datetime import date

    from rqbench.llm.catalog import KNOWLEDGE_CUTOFFS, UNKNOWN_CUTOFFS, knowledge_cutoff, resolved_cutoff

    for name, c in KNOWLEDGE_CUTOFFS.items():
        assert re.fullmatch(r"\d{4}-\d{2}", c.month), name
        assert re.search(r"\(https://(ai\.google\.dev|platform\.claude\.com)/\S+\)$", c.source), name
    assert not set(UNKNOWN_CUTOFFS) & set(KNOWLEDGE_CUTOFFS)
    for name in UNKNOWN_CUTOFFS:  # looked up, not found: no value, whatever the spelling
        assert knowledge_cutoff(name) is None and resolved_cutoff(name, None) == (None, None)
    # the paper's judge, by litellm name, bare name, another provider's prefix, with options
    for spec in ("gemini/gemini-3.1-pro", "gemini-3.1-pro", "vertex_ai/gemini-3.1-pro", "gemini/gemini-3.1-pro@x=1"):
        assert knowledge_cutoff(spec).last_day() == date(2025, 1, 31)
    assert knowledge_cutoff("local") is None and knowledge_cutoff("local/smollm2-135m") is None
    got, source = resolved_cutoff("gemini/gemini-3-flash", None)
    assert got == date(2025, 1, 31) and "gemini-3-flash-preview" in source
    # the submission's own value wins over the catalog's
    assert resolved_cutoff("gemini/gemini-3-flash", date(2024, 6, 1)) == (date(2024, 6, 1), "submission")


def test_a_paper_model_listed_without_a_price_is_priced_by_its_preview_entry():
    """litellm's map lists gemini/gemini-3.1-pro at $0 a token; a dry run or the call log would call it free."""
    from rqbench.llm.catalog import PRICE_SOURCES, price_model
    from rqbench.llm.estimate import PriceBook

    assert price_model("gemini/gemini-3.1-pro") == PRICE_SOURCES["gemini/gemini-3.1-pro"]
    assert price_model("deepseek/deepseek-v4-pro") == "deepseek/deepseek-v4-pro"  # priced in the map itself
    rates = PriceBook().rates("gemini/gemini-3.1-pro", 1000)
    assert rates is not None and rates.full > 0 and rates.out > 0


def test_an_unknown_cutoff_says_why_never_a_guess():
    from rqbench.llm.catalog import UNKNOWN_CUTOFFS, unknown_cutoff_reason

    for name, why in UNKNOWN_CUTOFFS.items():  # the looked-up reason, by full name or the last name part
        assert why in unknown_cutoff_reason(name) and why in unknown_cutoff_reason(f"hosted_vllm/{name.split('/')[-1]}")
    assert "the submission states none and the model catalog has none" in unknown_cutoff_reason("acme/new-model@x=1")
    assert unknown_cutoff_reason("local").endswith("the embedded demo model states none")

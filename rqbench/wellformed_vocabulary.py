"""The vocabulary the well-formedness gate's rules share: words, clause marks, the field names of our replies and
records, slots, tags, list markers, JSON and markup debris, the material our prompts wrap around paper text. The
rules themselves are ``wellformed.py``; a change here changes the gate's fingerprint as a change there does.
"""

from __future__ import annotations

import re

MATH = re.compile(r"\[MATH\]")

# A word: letters or digits, joined by inner hyphens or apostrophes ("F-score", "model's").
WORD = re.compile(r"[^\W_]+(?:[-'\u2019][^\W_]+)*")

WH = frozenset("how what which why when where who whom whose whether".split())

AUX = frozenset(
    "is are was were am do does did can could will would shall should may might must has have had "
    "isn't aren't wasn't weren't don't doesn't didn't can't couldn't won't wouldn't shouldn't hasn't haven't".split()
)

SPACE = re.compile(r"\s+")

LETTERS = re.compile(r"[^\W\d_]+")

CLAUSE_SPLIT = re.compile(r"[,;:()\[\]\u2013\u2014]|\s-\s")

LEADING_CONJ = frozenset("and or but so yet if".split())

# Words a sentence cannot end on, and lowercase words a sentence cannot start with: the marks of
# a piece cut from a longer text.
DANGLING_END = frozenset(
    "and or but nor the a an of to with for in on at by from as than which that whose whether its their our".split()
)

RELATIVE = frozenset("which that who".split())

COPULA = frozenset("is are was were be has have".split())

DANGLING_START = frozenset("and or but nor of with by from than which that whose whereas because then so".split())

# The fields of the reply and dataset models in records.py (test_wellformed keeps this list in
# step). Names with "_" are never prose; plain words are echoes only as a key ("question: ...").
FIELD_NAMES = frozenset(
    """
    label reason problem_statement main_idea_headline novelty_type ideas contributions gaps
    research_questions question cited_keys addressed confidence reasoning evidence scores
    originality gap_addressing non_obviousness relevance ranking mentions_source_specific_name
    main_object_in_source introduces_new_mechanism source_bound_score diagnostic_test_score
    source_bound_scope diagnostic_scope short_reason_source_bound short_reason_diagnostic
    pairwise_scores covering_subset_indices covered rule_corrections rq_id rq paper_id arxiv_id paper_published paper_published_source subfield
    cited_paper_ids cited_key cited_paper_id verification text model gt_rq background_paper_ids
    failure influential_keys extraction_model n_rqs paper
    new_problem new_method method_improvement new_resource empirical_finding
    competitor_baseline minimally_influential canonical_reference not_source_bound
    source_bound mildly_source_bound strongly_source_bound not_diagnostic mildly_diagnostic strongly_diagnostic
    """.split()
)

SNAKE_FIELDS = frozenset(n for n in FIELD_NAMES if "_" in n)

# The fields of the replies and rows that hold a research question (the generation reply, the author-RQ
# reply and its items, a submission line, a dataset row): the structure a submitted question can echo.
QUESTION_REPLY_FIELDS = frozenset("research_questions question cited_keys gaps rq_id failure rq gt_rq".split())

SNAKE_TOKEN = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z][A-Za-z0-9]{0,40}(?:_[A-Za-z0-9]{1,40}){1,8}")

KEY_AT_CLAUSE = re.compile(r"(?:^|[{\[,])\s{0,3}[\"']?([A-Za-z][A-Za-z ]{0,30}?)[\"']?\s{0,3}:")

HTML_TAGS = frozenset(
    "a b i u s em strong p br hr div span sup sub li ul ol code pre table tr td th h1 h2 h3 h4 h5 h6 "
    "blockquote img small big tt think answer im_start im_end html body".split()
)

# A slot or a tag: "<" right before a letter ("<gap>", "<question 1?>", "</b>"); "x < y" is neither.
ANGLE = re.compile(r"<(/?)([A-Za-z][^<>\s/]{0,40})[^<>]{0,80}>")

UNCLOSED_ANGLE = re.compile(r"<[A-Za-z][\w-]{0,40}(?![^<>]{0,200}>)")

CHAT_TAG = re.compile(r"<\|[^<>|]{1,30}\|>|\[/?INST\]")

TEMPLATE_VAR = re.compile(r"\{\{[^{}]{0,80}\}\}|\{[a-z_]{1,40}\}|\$\{[^{}]{0,80}\}")

INSERT = re.compile(
    r"\[\s{0,3}(?:insert|your|placeholder|todo|tbd|fill)\b[^\]]{0,60}\]|\binsert\b[^.?!]{0,60}\bhere\b", re.I
)

STAND_IN_TOKEN = re.compile(r"\b(?:TODO|TBD|TBA|FIXME|XXX)\b|[Ll]orem [Ii]psum")

STAND_IN_WHOLE = frozenset(
    "n/a na n.a none null nil undefined unknown todo tbd tba fixme placeholder string text sentence "
    "example sample ... \u2026 - -- \u2014 ? . empty".split()
)

LABEL_WHOLE = re.compile(
    r"(?:research\s{1,3})?(?:question|rq|gap|idea|contribution|headline|main idea|problem statement|answer|"
    r"item|text|string|sentence|example|q)\s{0,3}#?\s{0,3}\d{0,3}\s{0,3}[?.:!]?",
    re.I,
)

LIST_MARKER = re.compile(
    r"(?:[-*\u2022\u00b7]\s|\(?\d{1,2}[.)]\s|\([a-h]\)\s|[a-h]\)\s|\(?[ivx]{1,4}\)\s|"
    r"(?:research\s{1,3}question|rq|question|q|gap|idea|contribution|headline)\s{0,3}[#_-]?\s{0,3}"
    r"(?:\d{1,2}\s{0,3}[:.)\-](?=\s|$)|:))",
    re.I,
)

ENUMERATOR = re.compile(r"(?:^|(?<=\s))(?:\d{1,2}|[ivx]{1,4}|[a-h])$")

# A bibliography key used as a label ("JeremyWaltEtl89: ...", "su2021roformer: ..."): one token of
# letters and digits, a digit somewhere after a letter, then a colon.
KEY_LABEL = re.compile(r"[A-Za-z][A-Za-z._-]{0,40}\d[\w.-]{0,40}:\s")

LINE_LIST = re.compile(r"\n[ \t]{0,8}(?:[-*\u2022]|\d{1,2}[.)])\s")

JSON_DEBRIS = re.compile(
    r"[{}]|\"\s{0,3}:|\"\s{0,3},\s{0,3}\"|\[\s{0,3}[\"']|[\"']\s{0,3}\]|\\[\"nrtu/\\]|\[\s{0,3}\]|"
    r":\s{0,3}(?:null|true|false)\b"
)

LATEX = re.compile(r"\\[A-Za-z]{1,40}|\$[^$\s](?:[^$]{0,200}[^$\s])?\$(?!\d)|\\\\")

MARKDOWN = re.compile(r"```|\*\*[^*\n]{1,200}\*\*|(?:^|\n)\s{0,3}#{1,6}\s|\[[^\]\n]{1,100}\]\(\s{0,3}https?:")

ENTITY = re.compile(r"&(?:amp|lt|gt|quot|nbsp|#\d{1,6});")

CITE_NUMBERS = re.compile(r"\[\d{1,3}(?:\s{0,3}[,\u2013-]\s{0,3}\d{1,3}){0,10}\]")

# The builder renders a citation as "[@key]" (pandoc style); a text carrying one copied the prompt's material.
CITE_KEYS = re.compile(r"\[\s{0,3}@[^\s\]]{1,80}")

# Under Standard.submitted: any "<...>" (a slot of ours is matched by its first word), a "{{name}}", lorem
# ipsum, a quotation (one followed by ":" or "=" is a key, not a mention; a straight quote opens and closes
# only at a word's edge), and a key before a colon (underscores allowed: "research_questions:").
ANY_ANGLE = re.compile(r"<([^<>\s][^<>\n]{0,40})>")

DOUBLE_BRACES = re.compile(r"\{\{([^{}]{1,80})\}\}")

LOREM = re.compile(r"[Ll]orem [Ii]psum")

QUOTATION = re.compile(
    r"(?:(?<![\w\"])\"[^\"\n]{1,300}\"(?![\w\"])|\u201c[^\u201d\n]{1,300}\u201d"
    r"|(?<![\w'\u2019])['\u2018][^'\u2018\u2019\n]{1,300}['\u2019](?![\w'\u2019])"
    r"|(?<!`)`[^`\n]{1,300}`(?!`))(?!\s*[:=])"
)

SENTENCE_END = re.compile(r"(?<=[a-z0-9)\]][.!])\s+(?=[A-Z])")

KEY_ANY = re.compile(r"(?:^|[{\[,])\s{0,3}[\"']?([A-Za-z][A-Za-z_ ]{0,30}?)[\"']?\s{0,3}:")

KEY_VALUE_RUN = re.compile(
    r"(?:^|[\s,;{\[(])[A-Za-z_][\w-]{0,30}\s?:(?!//)\s?[^\s:,;][^:,;]{0,60}[,;]\s?[A-Za-z_][\w-]{0,30}\s?:(?!//)"
)

# The material our prompts wrap around paper text (builder/prompt_text.py and the templates).
RENDERED_MATERIAL = re.compile(
    r"\(section:|\[\.\.\. cut:|\(title unknown; citation key|more citations not shown|"
    r"\(no citation context was found\)|<<<|>>>|^\(none\)$"
)

ECHO_RUN = 6  # this many consecutive words shared with a prompt template make an echo

ECHO_CONTENT = 3  # ... of which at least this many are not function words ("in the same order as the" is no echo)

FUNCTION_WORDS = frozenset(
    """
    a an the of to in on at by for from with as and or but nor not no so if then than that this these those
    it its is are was were be been being do does did has have had can could will would should may might must
    there their they them we our you your he she his her which who whom whose what when where why how
    all any each every some one two three more most other same such only also very into onto over under
    about after before between both either neither while whether out up down off again further once
    s t m
    """.split()
)

REPEATED_PUNCT = re.compile(r"([?!,;:])(?:\s{0,3}\1)+|\.\s{1,3}\.|\.{4,}|(?<!\.)\.\.(?!\.)")

ELLIPSIS_END = re.compile(r"(?:\.{3}|\u2026)\s{0,3}[?\"')\]]{0,3}$")

INVISIBLE = frozenset({"Cf", "Co", "Cs", "Cn"})

"""One-line meanings of record fields that carry no pydantic ``description``, for the card's fields table.

A field's own ``Field(description=...)`` in ``rqbench.records`` wins; this table
fills the rest. ``tests/test_card.py`` fails when a published field has neither,
so a new field cannot reach the card undocumented.
"""

from __future__ import annotations

FIELD_DOCS: dict[str, str] = {
    # RQRecord
    "RQRecord.rq_id": "`<paper_id>_rq<index>`, index = position in the paper's RQ list.",
    "RQRecord.rq": "The author-anchored research question.",
    "RQRecord.arxiv_id": "The source paper M's arXiv id; null for a paper from a local folder.",
    "RQRecord.paper_published": "M's first-version date (arXiv v1, UTC day, ISO 8601); null when unknown.",
    "RQRecord.paper_published_source": "How paper_published is known: `arxiv_api` (arXiv's `published`) or "
    "`metadata_file` (the metadata.json of a local LaTeX folder with no arXiv record); null when the date is unknown.",
    "RQRecord.subfield": "M's arXiv primary category.",
    "RQRecord.novelty_type": "The kind of novelty M claims (closed set, see the records module).",
    "RQRecord.problem_statement": "M's problem, as extracted.",
    "RQRecord.main_idea_headline": "M's main idea in one line.",
    "RQRecord.contributions": "M's stated contributions.",
    "RQRecord.ideas": "M's ideas (methods or approaches).",
    "RQRecord.gaps": "Gaps in cited works that M identifies and addresses.",
    "RQRecord.cited_keys": "M's bibliography keys of the background papers.",
    "RQRecord.verification": "The LLM check that M's contribution addresses the RQ; null if not run.",
    "Gap.text": "The gap statement.",
    "Gap.cited_key": "Bibliography key of the cited work the gap is about.",
    "Gap.cited_paper_id": "That cited work's id in `cited_papers`, when resolved.",
    "Verification.addressed": "Whether M's own contribution addresses the RQ.",
    "Verification.confidence": "high, medium or low.",
    "Verification.reasoning": "The verifier's reasoning.",
    "Verification.evidence": "A quote or pointer into M.",
    "Verification.model": "The verifying model.",
    # PaperRecord and SourcePaper
    "PaperRecord.paper": "arXiv and Semantic Scholar metadata of M.",
    "PaperRecord.problem_statement": "M's problem, as extracted.",
    "PaperRecord.main_idea_headline": "M's main idea in one line.",
    "PaperRecord.novelty_type": "The kind of novelty M claims.",
    "PaperRecord.ideas": "M's ideas.",
    "PaperRecord.contributions": "M's contributions.",
    "PaperRecord.n_rqs": "How many RQs of the release come from M.",
    "PaperRecord.influential_keys": "Bibliography keys labelled inspiration or competitor/baseline.",
    "PaperRecord.extraction_model": "The model that extracted ideas and contributions.",
    "SourcePaper.title": "Title.",
    "SourcePaper.abstract": "Abstract.",
    "SourcePaper.authors": "Author names.",
    "SourcePaper.published": "First arXiv version date (ISO 8601).",
    "SourcePaper.updated": "Latest arXiv version date (ISO 8601).",
    "SourcePaper.published_source": "How `published` is known: `arxiv_api` or `metadata_file` (see the `rqs` "
    "field paper_published_source); null when there is no date.",
    "SourcePaper.doi": "DOI, if any.",
    "SourcePaper.journal_ref": "arXiv journal reference, if any.",
    "SourcePaper.s2_paper_id": "Semantic Scholar paper id.",
    "SourcePaper.citation_count": "Semantic Scholar citation count when filtered.",
    "SourcePaper.venue": "Venue name from Semantic Scholar.",
    "SourcePaper.publication_types": "Semantic Scholar publication types.",
    "SourcePaper.external_ids": "Other ids (DOI, DBLP, ...) as key/value pairs.",
    # CitedPaper
    "CitedPaper.title": "Title of the cited work.",
    "CitedPaper.arxiv_id": "arXiv id, when the work is on arXiv.",
    "CitedPaper.abstract": "Abstract, when found.",
    "CitedPaper.text_level": "How much text there is: full (section text), abstract, or title.",
    "CitedPaper.sections": "Body text, section by section, in document order.",
    "SectionText.section": "Section name.",
    "SectionText.text": "Section text.",
    # EvaluationInstance
    "EvaluationInstance.rq_id": "The RQ this instance evaluates against.",
    "EvaluationInstance.gt_rq": "The author-anchored RQ (ground-truth reference).",
    "EvaluationInstance.arxiv_id": "The source paper M's arXiv id; null for a paper from a local folder.",
    "EvaluationInstance.paper_published": "M's first-version date (arXiv v1, UTC day, ISO 8601); null when unknown. "
    "Its month is the instance's release window. A model's clean (post-cutoff) figures are over the instances "
    "dated after its knowledge cutoff; an undated instance is in none.",
    "EvaluationInstance.paper_published_source": "How paper_published is known: `arxiv_api` or `metadata_file`; "
    "null when the date is unknown.",
    "EvaluationInstance.subfield": "M's arXiv primary category.",
    "EvaluationInstance.background_paper_ids": "The papers a model reads (ids in `cited_papers`).",
}

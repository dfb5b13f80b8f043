"""One slug for file names and local paper ids (``rqbench.paths.slug``), each call site's reading pinned.

It replaced three copies: judging's (file names: case and ``._-`` kept, long ones a prefix plus a hash),
sourcing's (a local paper's id: lower-case letters and digits, a hash of the name when nothing is left)
and the submit command's (cut at 80 characters, "submission" when nothing is left).
"""

from rqbench.builder.sourcing import folder_paper_id
from rqbench.paths import slug


def test_file_names_keep_case_and_dots_and_stay_distinct_when_long():
    assert slug("openai/gpt-4.1 (mini)") == "openai-gpt-4.1-mini"
    assert slug("..//..") == "x"
    long_a, long_b = "m" * 70 + "a", "m" * 70 + "b"
    assert len(slug(long_a)) == 60 and slug(long_a) != slug(long_b)
    assert slug(long_a).startswith("m" * 49 + "-")


def test_local_paper_ids_are_lower_case_letters_and_digits():
    assert folder_paper_id("Notes and Drafts!") == "notes-and-drafts"
    assert folder_paper_id("ACL_template.v2") == "acl-template-v2"  # a file name would keep "ACL_template.v2"
    assert slug("ACL_template.v2") == "ACL_template.v2"
    assert folder_paper_id("***").startswith("paper-") and folder_paper_id("***") != folder_paper_id("+++")
    assert folder_paper_id("x" * 100) == "x" * 100  # an id is never cut: cutting would change existing ids


def test_the_submit_commands_file_name():
    assert slug("***", max_len=80, empty="submission") == "submission"
    # where the copies differed: a model name over 80 characters was cut bare; now it keeps a hash of the whole
    name = slug("m" * 90, max_len=80, empty="submission")
    assert len(name) == 80 and name != slug("m" * 89 + "n", max_len=80, empty="submission")

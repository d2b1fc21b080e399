"""No silent pass: every key of ``expect`` compares something, ``expect.error`` is met
only by an error in the cluster or scheduler the case describes (never by one in how
the case is written), and a variant kspread cannot honour fails at its key."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kspread.format.loader import read_file
from kspread.workflow.runner import check
from tests.helpers import verdict, write_case

CLUSTER = """\
name: c
version: "1.30"
nodes: [n1, n9]
pod: {name: p}
"""


def _checked(tmp_path, body):
    p = write_case(tmp_path, body)
    res = read_file(p)
    assert res.error is None, res.error
    return [check(d) for d in res.docs]


# ---- expect.error ----------------------------------------------------------------------------------


def test_an_empty_error_is_refused_and_no_other_key_is_ignored(tmp_path):
    # the case: the schema's own complaint about '' used to be taken as the expected error
    v = verdict(tmp_path, CLUSTER + "expect: {feasible: [n9], error: ''}\n")
    assert not v.passed
    assert v.message.endswith("case.yaml:7: expect.error: an empty `error` would match every message: give the "
                              "text the error must contain (got '')"), v.message


def test_error_beside_other_keys_is_refused(tmp_path):
    v = verdict(tmp_path, CLUSTER + "expect: {error: 'is already marked', feasible: [n9], selected: n9}\n")
    assert not v.passed
    assert v.message.endswith("case.yaml:7: expect.feasible: `error` cannot be combined with other keys "
                              "(feasible, selected): a case that fails to load or run has no results to compare "
                              "them with"), v.message


def test_an_error_about_expect_never_meets_expect_error(tmp_path):
    # the text is in the message, but the error is the expect block's own
    v = verdict(tmp_path, CLUSTER + "expect: {error: cannot be combined, feasible: [n9]}\n")
    assert not v.passed
    assert "expect.feasible: `error` cannot be combined with other keys" in v.message
    assert v.message.endswith("(this error is in how the case is written, not in the cluster or scheduler it "
                              "describes: it never satisfies expect.error)"), v.message


@pytest.mark.parametrize("body, shown", [
    # a mistyped key of the format
    (CLUSTER.replace("pod: {name: p}", "pod: {name: p, lables: {a: b}}") + "expect: {error: unknown field}\n",
     "case.yaml:6: pod.lables: unknown field 'lables'"),
    # a document that is not quite a case
    (CLUSTER + "expect: {error: 'Case document must have'}\n", None),
    # a shape the format does not allow
    (CLUSTER + "schedule: [{name: q}]\nexpect: {error: not both}\n",
     "case.yaml:7: schedule: give either `pod` or `schedule`, not both"),
    # a field about the case itself
    (CLUSTER + "tags: [1]\nexpect: {error: must be a string}\n", "case.yaml:7: tags[0]: must be a string (got 1)"),
    # an unquoted version
    (CLUSTER.replace('version: "1.30"', "version: 1.30x") + "expect: {error: quoted string}\n",
     "case.yaml:4: version: version must be a quoted string"),
])
def test_errors_in_how_the_case_is_written_never_meet_expect_error(tmp_path, body, shown):
    if shown is None:
        p = write_case(tmp_path, body)
        p.write_text(p.read_text().replace("apiVersion: kspread/v1", "apiVersion: kspread/v2"))
        (doc,) = read_file(p).docs
        v = check(doc)
        shown = "case.yaml:1: apiVersion: a kind: Case document must have apiVersion: kspread/v1"
    else:
        v = verdict(tmp_path, body)
    assert not v.passed
    assert shown in v.message, v.message
    assert "it never satisfies expect.error" in v.message


def test_a_document_that_cannot_be_read_never_meets_expect_error(tmp_path):
    p = write_case(tmp_path, CLUSTER + "nodes: [n2]\nexpect: {error: duplicate key}\n")
    (doc,) = read_file(p).docs
    v = check(doc)
    assert not v.passed
    assert "duplicate key 'nodes'" in v.message, v.message


@pytest.mark.parametrize("body, want", [
    # an object the API server refuses
    (CLUSTER.replace("nodes: [n1, n9]", "nodes: [N1]"), "a lowercase RFC 1123 subdomain"),
    # a plugin the version lacks
    (CLUSTER + "profile: {score: [SelectorSpread]}\n", "plugin 'SelectorSpread' does not exist in version 1.30"),
    # plugin arguments, decoded strictly as kube-scheduler decodes them
    (CLUSTER.replace('"1.30"', '"1.26"') + "profile:\n  score: [InterPodAffinity]\n  pluginConfig:\n"
     "    InterPodAffinity: {ignorePreferredTermsOfExistingPods: true}\n",
     'strict decoding error: unknown field "ignorePreferredTermsOfExistingPods"'),
    (CLUSTER.replace('"1.30"', '"1.26"') + "profile:\n  score: [InterPodAffinity]\n  pluginConfig:\n"
     "    InterPodAffinity: {hardPodAffinityWieght: 1}\n", "unknown field 'hardPodAffinityWieght'"),
])
def test_errors_in_the_cluster_or_scheduler_meet_expect_error(tmp_path, body, want):
    v = verdict(tmp_path, body + f"expect: {{error: {want!r}}}\n")
    assert v.passed, v.message
    assert want in v.message


def test_cli_validate_says_why_an_error_does_not_count(tmp_path):
    p = write_case(tmp_path, CLUSTER.replace("pod: {name: p}", "pod: {name: p, lables: {a: b}}")
                   + "expect: {error: unknown field}\n")
    r = subprocess.run([sys.executable, "-m", "kspread", "validate", str(p)], capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stdout.startswith(f"{p}:6: pod.lables: unknown field 'lables' (allowed: affinity, "), r.stdout
    assert r.stdout.endswith(")\n  (this error is in how the case is written, not in the cluster or scheduler it "
                             "describes: it never satisfies expect.error)\n"), r.stdout


# ---- every key compares something ------------------------------------------------------------------


@pytest.mark.parametrize("expect, where, message", [
    ("{filter: {}}", "expect.filter", ("an empty mapping compares no node: list the nodes whose status to compare "
                                      "(e.g. `n1: Unschedulable`)")),
    ("{preemption: {}}", "expect.preemption",
     ("an empty mapping compares nothing: give `node`, `victims` or both (`preemption: null` asserts that "
     "preemption ran and found no candidate)")),
    ("{scores: {NodeResourcesFit: {}}}", "expect.scores.NodeResourcesFit",
     ("an empty mapping compares no node of NodeResourcesFit: list its nodes (`scores: {}` alone asserts that "
     "nothing was scored)")),
    ("{rawScores: {NodeResourcesFit: {n1: 1}, TaintToleration: {}}}", "expect.rawScores.TaintToleration",
     ("an empty mapping compares no node of TaintToleration: list its nodes (`rawScores: {}` alone asserts that "
     "nothing was scored)")),
])
def test_an_expectation_that_compares_nothing_is_refused(tmp_path, expect, where, message):
    v = verdict(tmp_path, CLUSTER + "profile: {filter: [NodeResourcesFit], score: [NodeResourcesFit, "
                "TaintToleration], postFilter: [DefaultPreemption]}\n" + f"expect: {expect}\n")
    assert not v.passed
    assert v.message.endswith(f"case.yaml:8: {where}: {message}"), v.message


def test_empty_placements_are_refused(tmp_path):
    v = verdict(tmp_path, CLUSTER.replace("pod: {name: p}", "schedule: [{name: p}]") + "expect: {placements: {}}\n")
    assert not v.passed
    assert v.message.endswith("case.yaml:7: expect.placements: an empty mapping compares no pod: list the pods of "
                              "`schedule` whose placement to compare"), v.message


def test_empty_expectations_that_assert_something_still_do(tmp_path):
    # one feasible node: nothing is scored, so rawScores, scores and totals are empty
    one = CLUSTER.replace("pod: {name: p}", "pod: {name: p, nodeSelector: {kubernetes.io/hostname: n1}}")
    assert verdict(tmp_path, one + "expect: {rawScores: {}, scores: {}, totals: {}}\n").passed
    v = verdict(tmp_path, CLUSTER + "expect: {totals: {}}\n")
    assert not v.passed and "(nothing scored)" in v.message
    # feasible: [] is the empty set of nodes
    none = CLUSTER.replace("pod: {name: p}", "pod: {name: p, nodeSelector: {disk: ssd}}")
    assert verdict(tmp_path, none + "expect: {feasible: []}\n").passed
    assert not verdict(tmp_path, CLUSTER + "expect: {feasible: []}\n").passed


def test_variant_expectations_are_held_to_the_same_rules(tmp_path):
    results = _checked(tmp_path, CLUSTER + "expect: {feasible: [n1, n9]}\nvariants:\n  v: {expect: {filter: {}}}\n")
    assert [r.passed for r in results] == [True, False]
    assert results[1].message.endswith("case.yaml:9: variants.v.expect.filter: an empty mapping compares no node: "
                                       "list the nodes whose status to compare (e.g. `n1: Unschedulable`)")


# ---- variants ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant, line, where, message", [
    ("renamed: {name: other, expect: {feasible: [n1]}}", 10, "variants.renamed.name",
     "a variant cannot rename its case: it runs as c[renamed] (remove `name`)"),
    ("outer: {variants: {inner: {expect: {feasible: [n7]}}}}", 10, "variants.outer.variants",
     ("variants do not nest: a variant's own `variants` would never run (declare each one under the case's "
     "`variants`)")),
    ("'': {expect: {feasible: [n1]}}", 10, 'variants[""]',
     ("a variant needs a name of letters, digits, '_', '.', '+' or '-' (its item is <case>[<variant>]); an empty "
     "name is not one")),
    ("'a b': {expect: {feasible: [n1]}}", 10, 'variants["a b"]',
     ("a variant needs a name of letters, digits, '_', '.', '+' or '-' (its item is <case>[<variant>]); the name "
     "'a b' is not one")),
])
def test_a_variant_kspread_cannot_honour_fails_at_its_key(tmp_path, variant, line, where, message):
    body = CLUSTER + "expect: {feasible: [n1, n9]}\nvariants:\n  ok: {version: '1.29'}\n  " + variant + "\n"
    p = write_case(tmp_path, body)
    docs = read_file(p).docs
    assert [d.name for d in docs][:2] == ["c", "c[ok]"]
    results = [check(d) for d in docs]
    assert [r.passed for r in results] == [True, True, False]
    assert results[2].message == f"{p}:{line}: {where}: {message}"


def test_empty_variants_are_refused(tmp_path):
    (v,) = _checked(tmp_path, CLUSTER + "expect: {feasible: [n1, n9]}\nvariants: {}\n")
    assert not v.passed
    assert v.message.endswith("case.yaml:8: variants: an empty mapping declares no variant: add one or remove "
                              "`variants`"), v.message


def test_a_variant_error_never_meets_expect_error(tmp_path):
    results = _checked(tmp_path, CLUSTER + "expect: {error: cannot rename}\nvariants:\n  v: {name: x}\n")
    assert not results[1].passed
    assert "variants.v.name: a variant cannot rename its case" in results[1].message


@pytest.mark.parametrize("variant, where, message", [
    ("v: {}", 'variants.v', "an empty overlay changes nothing: the variant would run the case itself again"),
    ("v: {pdbs: null}", "variants.v.pdbs", ("`pdbs: null` removes a field the case does not set: it would change "
                                           "nothing")),
    ("v: {pod: {nodeSelector: null}}", "variants.v.pod.nodeSelector",
     "`nodeSelector: null` removes a field the case does not set: it would change nothing"),
])
def test_an_overlay_that_changes_nothing_fails_at_its_key(tmp_path, variant, where, message):
    results = _checked(tmp_path, CLUSTER + "expect: {feasible: [n1, n9]}\nvariants:\n  " + variant + "\n")
    assert [r.passed for r in results] == [True, False]
    assert results[1].message.endswith(f"case.yaml:9: {where}: {message}"), results[1].message


def test_null_removes_what_the_case_sets_and_is_a_value_in_expect(tmp_path):
    body = CLUSTER.replace("pod: {name: p}", "pod: {name: p, nodeSelector: {disk: ssd}}") + \
        "expect: {feasible: []}\nvariants:\n  v: {pod: {nodeSelector: null}, expect: {selected: [n1, n9]}}\n" \
        "  w: {expect: {feasible: [], selected: null}}\n"
    assert [r.passed for r in _checked(tmp_path, body)] == [True, True, True]


def test_the_text_is_looked_for_in_the_field_and_message_not_the_file_name(tmp_path):
    # every error starts with the file name: ".yaml" would match any of them
    body = CLUSTER.replace("nodes: [n1, n9]", "nodes: [N1]")
    v = verdict(tmp_path, body + "expect: {error: case.yaml}\n")
    assert not v.passed
    assert v.message.endswith("case.yaml:5: nodes[0].name: a lowercase RFC 1123 subdomain must consist of lower "
                              "case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
                              "character (e.g. 'example.com', regex used for validation is "
                              "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*') (got 'N1')"), v.message
    assert verdict(tmp_path, body + "expect: {error: 'nodes[0].name: a lowercase'}\n").passed


def test_a_blank_error_is_refused(tmp_path):
    v = verdict(tmp_path, CLUSTER + "expect: {error: '  '}\n")
    assert not v.passed
    assert v.message.endswith("case.yaml:7: expect.error: an empty `error` would match every message: give the "
                              "text the error must contain (got '  ')"), v.message


def test_an_overlay_that_sets_what_the_case_has_fails_at_its_key(tmp_path):
    results = _checked(tmp_path, CLUSTER + "expect: {feasible: [n1, n9]}\nvariants:\n  same: {version: '1.30', "
                       "expect: {feasible: [n1, n9]}}\n")
    assert [r.passed for r in results] == [True, False]
    assert results[1].message.endswith("case.yaml:9: variants.same: the overlay changes nothing (it sets what the "
                                       "case already has): the variant would run the case itself again")


def test_an_unknown_plugin_argument_in_a_configuration_file_meets_expect_error(tmp_path):
    (tmp_path / "sched.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n  pluginConfig:\n  - name: PodTopologySpread\n"
        "    args:\n      defaultingType: List\n      defaultConstraints:\n"
        "      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, maxSkw: 2}\n", encoding="utf-8")
    v = verdict(tmp_path, CLUSTER + "profile: {config: sched.yaml}\nexpect: {error: \"unknown field 'maxSkw'\"}\n")
    assert v.passed, v.message
    assert v.message.startswith(f"{tmp_path / 'sched.yaml'}:10: profiles[0].pluginConfig[0].args.defaultConstraints[0]"
                                ".maxSkw: unknown field 'maxSkw'"), v.message

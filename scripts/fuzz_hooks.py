# schemathesis hooks for `npm run fuzz` (loaded through SCHEMATHESIS_HOOKS, set by scripts/fuzz.ts).
#
# Hypothesis describes a strategy by parsing its lambdas' source with `ast.parse`, and schemathesis runs its
# workers as threads. On CPython before 3.12.1 / 3.11.8 the AST constructor keeps its recursion count in state
# shared by every thread, so two parses at once can fail with "SystemError: AST constructor recursion depth
# mismatch" (python/cpython#106905, fixed by giving each call its own count), which Hypothesis then reports as a
# flaky test. Parsing one at a time avoids it; the parses are short and rare.
import ast
import threading

_parse = ast.parse
_one_at_a_time = threading.RLock()


def _parse_alone(*args, **kwargs):
    with _one_at_a_time:
        return _parse(*args, **kwargs)


ast.parse = _parse_alone


# Two rules of the document that schemathesis cannot hold its own generated requests to, taught to it here so
# that the positive checks stay strict (any refusal of a positive case fails the run):
import re  # noqa: E402

import schemathesis  # noqa: E402


def _positive(case) -> bool:
    meta = case.meta
    return meta is not None and meta.generation.mode.is_positive


@schemathesis.hook
def filter_case(context, case):
    """Drops a positive case whose path value the document's `not` excludes (values taken from links are not
    checked against it: a platform attribute's name, read from a listing, would reach the withdraw path)."""
    definition = case.operation.definition.raw
    if not _positive(case) or not isinstance(definition, dict):  # a GraphQL field has no parameters
        return True
    for parameter in definition.get("parameters", []):
        excluded = parameter.get("schema", {}).get("not", {}).get("pattern")
        value = (case.path_parameters or {}).get(parameter.get("name"))
        if parameter.get("in") == "path" and excluded and isinstance(value, str) and re.search(excluded, value):
            return False
    return True


@schemathesis.hook
def map_case(context, case):
    """A default must be one of the allowed_values when there are some: the one declaration rule JSON Schema
    cannot state (a value drawn for each field alone rarely meets it). A positive declaration gets the first."""
    body = case.body
    if _positive(case) and isinstance(body, dict):
        allowed = body.get("allowed_values")
        if isinstance(allowed, list) and allowed and body.get("default_value") is not None:
            body["default_value"] = [allowed[0]] if body.get("cardinality") == "multi" else allowed[0]
    return case


# The GraphQL JSON scalar (enumerated values, defaults, a model document for `modelPlan`): schemathesis has no
# strategy for a custom scalar and stops at a required argument of one. Any JSON value as a GraphQL literal, and
# model documents whose shape is right (format, types, declarations), so that the plan's own rules run too.
from hypothesis import strategies as st  # noqa: E402
from schemathesis.graphql import nodes  # noqa: E402
import graphql  # noqa: E402

_NAME = st.from_regex(r"\A[_A-Za-z][_0-9A-Za-z]{0,15}\Z")


def _object(fields):
    return nodes.Object(
        [graphql.ObjectFieldNode(name=graphql.NameNode(value=key), value=value) for key, value in fields.items()]
    )


def _literal(value):
    """A GraphQL literal of a JSON value."""
    if value is None:
        return nodes.Null
    if isinstance(value, bool):
        return nodes.Boolean(value)
    if isinstance(value, int):
        return nodes.Int(value)
    if isinstance(value, float):
        return nodes.Float(value)
    if isinstance(value, str):
        return nodes.String(value)
    if isinstance(value, list):
        return nodes.List([_literal(item) for item in value])
    return _object({key: _literal(item) for key, item in value.items()})


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**31), 2**31 - 1) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_NAME, children, max_size=4),
    max_leaves=12,
)
_declaration = st.fixed_dictionaries(
    {
        "name": st.from_regex(r"\A[a-z][a-z0-9_]{0,20}\Z"),
        "value_type": st.sampled_from(["string", "number", "boolean", "date", "json", "entity_ref"]),
        "cardinality": st.sampled_from(["single", "multi"]),
    },
    optional={"required": st.booleans(), "description": st.text(max_size=40)},
)
_model = st.fixed_dictionaries(
    {
        "format": st.just("entity-metamodel/v1"),
        "types": st.lists(
            st.fixed_dictionaries(
                {"name": st.from_regex(r"\A[A-Za-z][A-Za-z0-9 ]{0,30}\Z")},
                optional={"attributes": st.lists(_declaration, max_size=3)},
            ),
            max_size=3,
        ),
    }
)
schemathesis.graphql.scalar("JSON", (_json | _model).map(_literal))

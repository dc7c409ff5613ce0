"""The schema shipped in the package is the locked contract, byte for byte."""

from __future__ import annotations

import json

from conftest import SHARED, need
from jsonschema import Draft202012Validator

from streamv1.translator.contract.validate import schema_text


def test_packaged_schema_is_identical_to_the_shared_contract() -> None:
    shared = need(SHARED / "schema" / "stream-json.schema.json")
    assert schema_text() == shared.read_text("utf-8")


def test_packaged_schema_is_a_valid_2020_12_schema() -> None:
    Draft202012Validator.check_schema(json.loads(schema_text()))

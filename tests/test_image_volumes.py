"""Image volumes (spec.volumes[].image): kept from 1.36, where ImageLocality sums their images
(cases/scoring/image-volumes.yaml) and VolumesSigner signs their reference; a bad one is an error."""

from __future__ import annotations

from typing import Any

import pytest

from kspread.engine.plugins.volumes import volumes_signer
from kspread.errors import CaseError
from kspread.format.case import build_case


def _pod(version: str, volume: dict[str, Any]):
    doc = {"apiVersion": "kspread/v1", "kind": "Case", "version": version, "nodes": ["n1"],
           "pod": {"name": "p", "volumes": [volume]}}
    return build_case(doc, "t").incoming[0]


def test_image_volume_kept_from_1_36_only():
    vol = {"name": "m", "image": {"reference": "registry.example/model:v3"}}
    assert [v.image for v in _pod("1.36", vol).volumes] == ["registry.example/model:v3"]
    assert _pod("1.35", vol).volumes == ()
    other = _pod("1.36", {"name": "m", "image": {"reference": "registry.example/model:v4"}})
    assert volumes_signer(_pod("1.36", vol)) != volumes_signer(other)


@pytest.mark.parametrize(("image", "field", "message"), [
    ({}, "reference", "Required value"),
    ({"reference": ""}, "reference", "Required value"),
    ({"reference": "x", "tag": "v1"}, "tag", "unknown field 'tag' in an image volume"),
])
def test_bad_image_volume(image, field, message):
    with pytest.raises(CaseError) as e:
        _pod("1.36", {"name": "m", "image": image})
    assert message in str(e.value)
    assert field in str(e.value)

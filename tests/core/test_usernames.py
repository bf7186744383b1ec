"""Usernames: NFKC and the Unicode TR39 confusable skeleton (issue 21, finding 5)."""

from __future__ import annotations

from core.usernames import looks_like, normalize_username, skeleton


def test_nfkc_folds_full_width_and_compatibility_forms():
    assert normalize_username("ａｄｍｉｎ") == "admin"
    assert normalize_username("ﬁona") == "fiona"
    assert normalize_username("аdmin") == "аdmin"  # Cyrillic а is not a compatibility form: NFKC keeps it


def test_the_skeleton_maps_look_alikes_to_one_prototype():
    assert skeleton("аdmin") == skeleton("admin")  # Cyrillic а
    # full-width letters are NFKC's business, not the skeleton's: names are normalised first
    assert skeleton("ａｄｍｉｎ") != skeleton("admin")
    assert skeleton(normalize_username("ａｄｍｉｎ")) == skeleton("admin")
    assert skeleton("paypaI") == skeleton("paypal")  # capital I looks like l
    assert skeleton("adrnin") == skeleton("admin")  # rn looks like m
    assert skeleton("bob") != skeleton("admin")
    assert skeleton("ann") != skeleton("anna")


def test_looks_like_names_the_existing_name_regardless_of_case():
    existing = ["admin", "bob"]
    assert looks_like("аdmin", existing) == "admin"
    assert looks_like("ａｄｍｉｎ", existing) == "admin"
    assert looks_like("AdmIn", existing) == "admin"
    assert looks_like("b0b", existing) is None  # digit zero is not TR39-confusable with o
    assert looks_like("carol", existing) is None

"""The warehouse scenario: two Pandas share a row of slots and hand boxes over between them."""

"""The buttons scenario: a panel of spring-returned push buttons (articulations) and lights."""

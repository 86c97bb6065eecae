"""The OpenTelemetry reader: span containers, conventions, and the families traced in them."""

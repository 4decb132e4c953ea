"""Analyses of spot traces and price history: zones to spread over, spot lifetimes
(Kaplan-Meier), hour-of-week price profiles and forecasts."""

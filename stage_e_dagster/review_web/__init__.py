"""The review page (`stage-e review serve`): people confirm or correct the machine's pick in a browser."""

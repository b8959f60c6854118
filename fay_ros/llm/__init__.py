"""Talking to language models: the one OpenAI-compatible client (`client`), the embedded
offline server (`embedded`), model profiles (`profiles`) and the one parser for JSON written by
a model (`model_json`). Used by the dialogue and the memory; imports neither."""

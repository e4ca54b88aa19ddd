"""``python -m ntsim.transformers.fetch_data``: fill the text-data cache (see ``_text_data``)."""

from __future__ import annotations

from ntsim.transformers._text_data import data_dir, fetch_text_data


def main() -> None:
    """Fetch every dataset of :data:`ntsim.transformers.TEXT_DATASETS` into the cache."""
    fetch_text_data(quiet=False)
    print(f"text data ready in {data_dir()}")


if __name__ == "__main__":
    main()

"""The floor for files people also edit: byte-preserving edits of JSON/JSONC (jsonedit,
jsonscan) and YAML (yamledit, yamlload), changing one entry and leaving every other byte,
comment and indent as it was. May import only errors."""

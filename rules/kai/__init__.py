"""KAI: KAITO workspaces (article: "Fine-tune a model with KAITO")."""

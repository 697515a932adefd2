"""STO: storage of datasets and checkpoints (article: "Store datasets and checkpoints", "Checkpoint to persistent storage")."""

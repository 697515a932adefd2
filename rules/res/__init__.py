"""RES: resources and shared memory (article: "Configure shared memory and resource management")."""

"""QUE: queues, gang scheduling and priorities (article: "Use gang scheduling and workload queues", "Configure training and inference priorities")."""

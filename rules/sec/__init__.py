"""Pod security: privilege escalation, capabilities, root users, privileged containers, hostPath volumes, credentials in env."""

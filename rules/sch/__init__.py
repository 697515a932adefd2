"""SCH: parsing and schemas."""

"""Turn Magic: The Gathering Comprehensive Rules texts into versioned, structured data."""

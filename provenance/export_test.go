package provenance

// FetchRoot lets the tests fetch a trusted root from a TUF repository of
// their own.
var FetchRoot = fetchRoot

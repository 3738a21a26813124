package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// contractFields is, per kind of object, the fields the model is told and
// so the fields a pin covers. Everything else (_meta above all, icons, and
// whatever a later protocol adds) is left out of Text.
var contractFields = map[Kind][]string{
	Tool:             {"name", "title", "description", "inputSchema", "outputSchema", "annotations"},
	Prompt:           {"name", "title", "description", "arguments"},
	Resource:         {"uri", "name", "title", "description", "mimeType"},
	ResourceTemplate: {"uriTemplate", "name", "title", "description", "mimeType"},
	ServerInfo:       {"name", "version", "title"},
}

// keyField is the field that keys an item of a listed kind.
var keyField = map[Kind]string{Tool: "name", Prompt: "name", Resource: "uri", ResourceTemplate: "uriTemplate"}

// capabilitiesLeftOut are the capability members that say nothing the model
// is told: _meta, and experimental, which carries vendors' flags.
var capabilitiesLeftOut = []string{"_meta", "experimental"}

// contractText is the canonical text of kind's contract fields of text.
// A field whose value is null counts as absent.
func contractText(kind Kind, text []byte) (json.RawMessage, error) {
	canon, _, err := contractTextKey(kind, text)
	return canon, err
}

// contractTextKey is contractText and the key the text names.
func contractTextKey(kind Kind, text []byte) (canon json.RawMessage, key string, err error) {
	if kind == Instructions {
		var s string
		if err := json.Unmarshal(text, &s); err != nil {
			return nil, "", fmt.Errorf("instructions must be a JSON string: %w", err)
		}
		canon, err := canonical(text)
		return canon, "", err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(text, &obj); err != nil || obj == nil {
		return nil, "", fmt.Errorf("a %s must be a JSON object", kind)
	}
	kept := make(map[string]json.RawMessage, len(obj))
	if kind == Capabilities {
		for name, v := range obj {
			kept[name] = v
		}
		for _, name := range capabilitiesLeftOut {
			delete(kept, name)
		}
	} else {
		for _, name := range contractFields[kind] {
			if v, ok := obj[name]; ok {
				kept[name] = v
			}
		}
	}
	for name, v := range kept {
		if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			delete(kept, name)
		}
	}
	if kf := keyField[kind]; kf != "" {
		if err := json.Unmarshal(kept[kf], &key); err != nil || key == "" {
			return nil, "", fmt.Errorf("a %s needs a non-empty string %q", kind, kf)
		}
	}
	joined, err := json.Marshal(kept)
	if err != nil {
		return nil, "", err
	}
	canon, err = canonical(joined)
	return canon, key, err
}

// keyOf is the key a canonical text of kind names.
func keyOf(kind Kind, canon []byte) (string, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(canon, &obj); err != nil {
		return "", err
	}
	var key string
	if err := json.Unmarshal(obj[keyField[kind]], &key); err != nil {
		return "", fmt.Errorf("a %s needs a string %q", kind, keyField[kind])
	}
	return key, nil
}

// KeyOf is the key an item's text names (its name, uri or uriTemplate), ""
// for the server-wide kinds.
func KeyOf(kind Kind, text []byte) (string, error) {
	if !kind.Keyed() {
		return "", nil
	}
	return keyOf(kind, text)
}

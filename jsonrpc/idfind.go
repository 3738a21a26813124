package jsonrpc

// idFinder follows the top level of a JSON object as its bytes stream past,
// to find the id of a message too long to keep wherever the id sits: the
// kept head and tail miss an id in the middle, and its request would then
// wait for an answer until the server died. It keeps a few bytes of state
// and the id token (up to maxFoundID bytes), never the message.
type idFinder struct {
	started, done, bad bool

	depth   int // containers open
	inStr   bool
	esc     bool
	wantKey bool // at depth 1, the next string is a member name
	wantVal bool // at depth 1, after ':': the next token is the value
	inKey   bool
	key     []byte // the member name being read (its first bytes)
	member  string // the member whose value comes next
	inID    bool   // reading the id's token
	idNum   bool   // the id is a number (ends at a delimiter)
	id      []byte
	idOK    bool // id holds a complete token

	hasMethod, hasResult bool
}

// maxFoundID bounds the id kept; a longer one is not looked for.
const maxFoundID = 4 << 10

func (f *idFinder) reset() {
	*f = idFinder{key: f.key[:0], id: f.id[:0]}
}

// feed takes the next bytes of the message.
func (f *idFinder) feed(p []byte) {
	for i := 0; i < len(p) && !f.done && !f.bad; i++ {
		c := p[i]
		if f.inStr {
			if !f.inKey && !f.inID {
				// Most bytes sit in long strings: skip to what matters.
				if j := skipPlain(p, i); j > i {
					if f.esc {
						f.esc = false
					}
					i = j - 1
					continue
				}
			}
			f.strByte(c)
			continue
		}
		if f.inID && f.idNum {
			if c == ',' || c == '}' || c == ' ' || c == '\t' || c == '\r' || c == '\n' {
				f.finishID()
			} else {
				f.addID(c)
				continue
			}
		}
		switch c {
		case ' ', '\t', '\r', '\n':
		case '"':
			f.inStr = true
			switch {
			case f.depth == 1 && f.wantKey:
				f.inKey, f.wantKey, f.key = true, false, f.key[:0]
			case f.depth == 1 && f.wantVal:
				f.wantVal = false
				if f.member == "id" {
					f.inID, f.idNum, f.idOK, f.id = true, false, false, append(f.id[:0], '"')
				}
			}
		case '{', '[':
			if !f.started {
				if c != '{' {
					f.bad = true // a batch or not an object: nothing to find
				}
				f.started, f.depth, f.wantKey = true, 1, true
				continue
			}
			f.wantVal = false
			f.depth++
		case '}', ']':
			f.depth--
			if f.depth == 0 {
				f.done = true
			}
		case ':':
			if f.depth == 1 {
				f.wantVal = true
			}
		case ',':
			if f.depth == 1 {
				f.wantKey = true
			}
		default:
			if !f.started {
				f.bad = true
				continue
			}
			if f.depth == 1 && f.wantVal {
				f.wantVal = false
				if f.member == "id" && (c == '-' || isDigit(c)) {
					f.inID, f.idNum, f.idOK, f.id = true, true, false, append(f.id[:0], c)
				}
			}
		}
	}
}

func (f *idFinder) strByte(c byte) {
	switch {
	case f.esc:
		f.esc = false
	case c == '\\':
		f.esc = true
	case c == '"':
		f.inStr = false
		if f.inKey {
			f.inKey = false
			f.member = string(f.key) // escaped names are not matched
			switch f.member {
			case "method":
				f.hasMethod = true
			case "result", "error":
				f.hasResult = true
			}
		}
		if f.inID {
			f.addID(c)
			f.finishID()
		}
		return
	}
	if f.inKey && len(f.key) < 8 {
		f.key = append(f.key, c)
	} else if f.inKey {
		f.key = append(f.key[:0], '-') // too long to be a member we want
	}
	if f.inID {
		f.addID(c)
	}
}

func (f *idFinder) addID(c byte) {
	if len(f.id) >= maxFoundID {
		f.inID, f.id = false, f.id[:0] // too long for a host's id
		return
	}
	f.id = append(f.id, c)
}

func (f *idFinder) finishID() {
	f.inID = false
	var sc Scanner
	sc.b = f.id
	var err error
	if f.idNum {
		err = sc.number()
	} else {
		_, err = sc.str()
	}
	f.idOK = err == nil && sc.i == len(f.id)
}

// found returns the top-level id token seen, if any.
func (f *idFinder) found() []byte {
	if f.bad || !f.idOK {
		return nil
	}
	return f.id
}

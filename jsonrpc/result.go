package jsonrpc

// The scan notes where the members of an object result are, so that one
// fact of a big result (MCP's isError, say) costs no second pass over it.

// maxResultMembers is how many members of a result the scan notes; MCP's
// results have four or fewer. A result with more is searched again.
const maxResultMembers = 6

type resultMembers struct {
	n     int  // members noted
	whole bool // the result is an object and every member is noted
	spans [maxResultMembers]struct {
		name, value [2]int // in Envelope.Result; name without its quotes
		escaped     bool
	}
}

// ResultMember returns the raw value of the first member called name of an
// object result, or nil.
func (e *Envelope) ResultMember(name string) []byte {
	if !e.result.whole {
		if e.Result == nil {
			return nil
		}
		return MemberValue(e.Result, name)
	}
	r := e.Result
	for _, sp := range e.result.spans[:e.result.n] {
		key := r[sp.name[0]:sp.name[1]]
		if sp.escaped {
			if k, ok := unquoteContents(key); ok && k == name {
				return r[sp.value[0]:sp.value[1]]
			}
		} else if string(key) == name {
			return r[sp.value[0]:sp.value[1]]
		}
	}
	return nil
}

// resultObject scans an object result as value would, noting its members.
func (s *Scanner) resultObject(r *resultMembers) error {
	*r = resultMembers{}
	if s.depthLimit() <= 0 {
		return s.errAt("nesting too deep")
	}
	s.outer++
	s.inner++
	defer func() { s.outer--; s.inner-- }()
	at := s.i // spans are noted from the result's start
	s.i++     // '{'
	s.ws()
	if s.peek() == '}' {
		s.i++
		r.whole = true
		return nil
	}
	for {
		s.ws()
		if s.peek() != '"' {
			return s.errAt("expected a member name")
		}
		nStart := s.i
		escaped, err := s.str()
		if err != nil {
			return err
		}
		nEnd := s.i
		s.ws()
		if s.peek() != ':' {
			return s.errAt("expected :")
		}
		s.i++
		s.ws()
		vStart := s.i
		if err := s.value(); err != nil {
			return err
		}
		if r.n < maxResultMembers {
			sp := &r.spans[r.n]
			sp.name, sp.value, sp.escaped = [2]int{nStart + 1 - at, nEnd - 1 - at}, [2]int{vStart - at, s.i - at}, escaped
		}
		r.n++
		s.ws()
		c := s.peek()
		s.i++
		if c == '}' {
			r.whole = r.n <= maxResultMembers
			r.n = min(r.n, maxResultMembers)
			return nil
		}
		if c != ',' {
			s.i--
			return s.errAt("expected , or closing bracket")
		}
	}
}

package probe

import (
	"fmt"

	"github.com/mcpsandbox/mcpsandbox/contract"
)

// Items is the listing as a contract: the server-wide items of its
// initialize result and every list's items, pages merged. An item listed
// on two pages is an error, as on one page (contract.FromList): which of
// the two a host shows is not the server's to decide.
func (l Listing) Items() ([]contract.Item, error) {
	items, err := contract.FromInitialize(l.Initialize)
	if err != nil {
		return nil, err
	}
	for method, pages := range l.Pages {
		seen := map[string]bool{}
		for _, page := range pages {
			got, err := contract.FromList(method, page)
			if err != nil {
				return nil, err
			}
			for _, it := range got {
				if seen[it.Key] {
					return nil, fmt.Errorf("%s lists %s %q on two pages", method, it.Kind, it.Key)
				}
				seen[it.Key] = true
			}
			items = append(items, got...)
		}
	}
	contract.SortItems(items)
	return items, nil
}

package pricing

import "sort"

func sortPrices(ps []Price) { sort.Slice(ps, func(i, j int) bool { return ps[i].Model < ps[j].Model }) }

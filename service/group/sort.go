package group

import (
	"sort"

	"tollgate/model"
)

func sortGroups(gs []model.Group) {
	sort.Slice(gs, func(i, j int) bool { return gs[i].Name < gs[j].Name })
}

#include <event2/event.h>

#include "evbase.h"

struct event_base *
evbase_new(int npriorities)
{
	struct event_config	*cfg;
	struct event_base	*base = NULL;

	if ((cfg = event_config_new()) == NULL)
		return NULL;
	if (event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER) == 0)
		base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	if (base != NULL && npriorities > 0 &&
	    event_base_priority_init(base, npriorities) == -1) {
		event_base_free(base);
		base = NULL;
	}
	return base;
}

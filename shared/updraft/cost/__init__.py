"""What Updraft costs, in dollars: prices (``prices``), a try's usage priced line by line (``breakdown``), a run's
and a DAG's days (``runs``), an idle environment's month (``idle``). The usage itself is recorded by each try
(``model.usage``, ``runtime.usage_meter``); this package only reads and prices it."""

"""The metadata store: one DynamoDB table behind the ``Store`` contract (:mod:`updraft.store.api`).

Modules: ``api`` (the contract, one protocol per aggregate, and its records), ``errors``, ``config``
(:class:`StoreConfig`), ``tables`` (the table as plain data, shared with the CDK stack, and ``create_table``),
``models`` (pynamodb models built per config), ``keys`` (every key string), ``writes`` (the conditional-write
helpers), ``blobs`` (values inline or in S3), ``lru`` (the serialized-DAG cache), ``base`` (what the aggregates
share), one module per aggregate with its named conditions and writes (``dags``, ``files``, ``runs``,
``task_instances``, ``pools``, ``xcoms``, ``variables``, ``connections``, ``event_logs``, ``heartbeats``,
``dag_deletion``, ``backfills``, ``state_stores``, ``waiting``: a run's waiting instances;
``encryption`` is the KMS cipher of variables and connections; ``run_shards``: how many partition keys a run's
instances spread over) and ``dynamo`` (:class:`DynamoStore`, composed of them).
Importing this package imports none of them: handlers load
only what they use. The store decides nothing about scheduling: it imports nothing from ``updraft.scheduling`` or
``updraft.parsing`` (DAG registration policy is :mod:`updraft.scheduling.commands.dag_registration`).

Rules the design keeps, because they are what makes it correct on real DynamoDB:

- Every decision is a strongly consistent read or a single-item conditional write. Indexes (eventually
  consistent) only *find* candidates; callers re-read or write conditionally before acting on one.
- No scans. Listings go through a keys-only index; work is found through sparse, sharded indexes.
- No hot partition per DAG: task instances partition by run, and a wide run's over up to 16 shards chosen at its
  creation (``run_shards``: whole-run reads query each, concurrently); the work indexes shard by CRC-32 over
  ``index_shards`` (every reader queries every shard).
- Every attribute name in an expression is a ``#placeholder`` (pynamodb writes them; ``test_store_requests``
  checks every expression the store sends), so reserved words (state, limit, name, key, data...) are safe.
- Instants are stored as fixed-width UTC strings, so string order is time order in sort keys.

Items (``pk`` / ``sk``)::

    DAG row         DAG#<dag_id>            META                     owner file, dag_hash, paused/active, next run
    DAG version     DAG#<dag_id>            VERSION#<dag_hash>       gzip canonical JSON, or an S3 key above
                                                                     large_item_bytes; immutable (runs pin it)
    run             DAG#<dag_id>            RUN#<run_id>             state, dates, conf, pinned dag_hash, ti_shards
    task instance   RUN#<dag_id>#<run_id>[#<shard>]   TI#<task_id>#<map_index+1, 7 digits>   waiting_pk/sk while
                                                                     it waits; shard: keys.ti_shard (none: shard 0)
    recorded try    RUN#<dag_id>#<run_id>[#<shard>]   TRY#<task_id>#<map_index+1>#<try, 5 digits>   a try a retry
                                                                     or a clear superseded (its instance's shard)
    XCom            RUN#<dag_id>#<run_id>[#<shard>]   XCOM#<task_id>#<map_index+1>#<key>   gzip JSON inline, or
                                                                     S3 (its instance's shard)
    run's ends      ENDS#<dag_id>#<run_id>  ENDS                     ended#<task>: ended upstreams of a wide fan-in,
                                                                     or a counted mapped task's ended instances;
                                                                     expanded#<task>: that mapped task's instances;
                                                                     ended#: ended leaves; waiting: the token of the
                                                                     last pass that left instances unclaimed (a
                                                                     number per counted task: the item stays small)
    limit counter   LIMIT#<limit_id or ~digest>[#<n>]  COUNTER       size, shards (root); share, free (every shard):
                                                                     ``updraft.limits`` (its PROTOCOL.md)
    pool record     LIMIT#pool:<name>       POOL                     name, slots, description, include_deferred,
                                                                     list keys
    file            FILE#<relative_path>    META                     DAGs it owns, hash/version, import errors,
                                                                     failed handlings of failed_version (a count)
    variable        VARIABLE#<key>          META                     value (KMS ciphertext when the environment
                                                                     has a key), description
    connection      CONNECTION#<conn_id>    META                     type, host, schema, login, port; password
                                                                     and extra as one KMS-encrypted JSON
    event log       EVENTS#<id % N>         EVENT#<id, 19 digits>    an API change: when, event, owner, ids, extra;
                                                                     id = request ms * 10^6 + crc32(request id) % 10^6
    heartbeat       HEARTBEAT#<component>   HEARTBEAT                at: the component's latest pass
    backfill        BACKFILL#<id>           META                     range, conf, limits, plan progress (``created``)
    active backfill ACTIVE_BACKFILL#<dag>   META                     the DAG's one active backfill id (put cond absent)
    id sequence     BACKFILL_SEQUENCE       META                     the last backfill id (ADD 1 per backfill)
    task state      TASK_STATE#<dag>#<run>#<task>#<map_index+1>  KEY#<key>   a task instance's state store
                                                                     (gzip JSON or S3, expires_at + TTL ``expires``)
    asset state     ASSET_STATE#<asset_id>  KEY#<key>                an asset's state store (``state_stores``)

Every ``<name>`` above is escaped (``keys.part``: ``#`` and ``%`` as ``%23``/``%25``), so names holding ``#``
never make two items one; valid dag, task and run ids hold neither, so their keys are the plain join.

Indexes::

    list_index    GSI  list_pk = DAGS#<shard> | POOLS | IMPORT_ERRORS#<shard> | VARIABLES |     KEYS_ONLY
                       CONNECTIONS | BACKFILLS#<dag_id> | ACTIVE_BACKFILLS, list_sk = id
                       every DAG row and pool; files only while they have import errors (sparse); every backfill
                       by DAG, and the active-backfill markers. Keys only,
                       so next-run advances never write to it.
    due_dags      GSI  due_pk = DUE#<crc32(dag_id) % N>, due_sk = next run_after                 ALL
                       sparse: only active, unpaused DAGs with a next run.
    active_runs   GSI  active_pk = ACTIVE#<crc32(dag_id#run_id) % N>, active_sk = date#dag#run  ALL
                       sparse: only queued/running runs; finishing a run REMOVEs the keys.
    waiting_tis   GSI  waiting_pk = RUN#<dag_id>#<run_id>, waiting_sk = (2^31-1 - priority,   KEYS_ONLY
                       10 digits)#<map_index+1, 7 digits>#task_id: sparse, only scheduled instances a claim
                       refused (set with their first stored reason, REMOVEd by any write out of scheduled and
                       by a clear); a run's waiting instances in claim order (``store.waiting``).
    runs_by_date  LSI  pk, run_date_sk = logical_date (else run_after)#run_id                   ALL
                       strongly consistent date order of one DAG's runs.

DAG registration (:mod:`updraft.scheduling.commands.dag_registration`) is made of the named writes below:
``register_parsed_file`` of a new DAG costs Get FILE, Get META, Put VERSION, Put META, Put FILE (5); the same
event again 1 + n reads and no writes; a duplicate + Get of the owner's FILE when its row is stale;
``remove_dag_file`` Get FILE, Update META per DAG, Delete FILE (2 + n); ``record_parse_failure`` (a failed
handling, counted on the file's record) Get FILE, Put FILE (2); ``set_paused`` Get META, Update META
(+ Get VERSION when unpausing a catchup=False DAG recomputes its next run).

Access patterns (N = index_shards, S = the run's shards, n = items involved; SC = strongly consistent, EC =
eventually consistent; a process that has not read a run yet reads its ``ti_shards`` once before the first
instance it touches;
"cond" = a conditional write whose failure is returned as False)::

    operation            key / index used                                            consistency  requests
    -------------------  ----------------------------------------------------------  -----------  -----------------
    get_file_record      Get FILE#/META                                               SC           1
    put_file_record      Put FILE (skipped when equal to the record read before)      -            0-1
    delete_file_record   Delete FILE#/META                                            -            1
    get_dag_meta         Get DAG#/META                                                SC           1
    put_new_dag          Put META cond attribute_not_exists(pk)                       cond         1
    update_dag_meta      Update META cond owner, hash, active, paused, next run =     cond         1
                         as read (the due index follows the written values)
    deactivate_dag       Update META cond owner = file AND active                     cond         1
    put_version          Put VERSION cond attribute_not_exists (+ S3 put if large)    cond         1
    list_dags            Query list_index DAGS#0..N-1, BatchGet META                   EC find, SC  N + n/100
    list_import_errors   Query list_index IMPORT_ERRORS#0..N-1, BatchGet FILE          EC find, SC  N + n/100
    get_serialized_dag   Get DAG#/VERSION# (+ S3 get if large); one bounded LRU per   SC           1, cached 0
                         process (the only cache of versions)
    due_dags             Query due_dags DUE#i, due_sk <= now, each shard              EC find      N
    advance_next_dagrun  Update META cond next_dagrun_logical_date = expected          cond         1 (2-3 if the
                         AND active AND unpaused (re-read only when that fails)                    DAG is paused)
    create_run           Put RUN cond attribute_not_exists(pk) (+ Get VERSION when    cond         1
                         the pinned version is not kept: it sizes the run's shards)
    get_run              Get DAG#/RUN#                                                SC           1
    list_runs            Query runs_by_date, descending, Limit                        SC           1 per page
    previous_run         Query runs_by_date run_date_sk < date, descending, filter    SC           1
                         logical_date exists (and not manual, for catchup DAGs),
                         Limit 1
    active_runs          Query active_runs ACTIVE#i, each shard                       EC find      N
    set_run_state        Update RUN cond state IN expected (REMOVE active keys when   cond         1
                         finishing, if_not_exists them when re-queued)
    set_run_note         Update SET/REMOVE note cond attribute_exists                 cond         1
    delete_run           Delete RUN cond state IN expected                            cond         1
    run_state_item,      set_run_state's / create_run's / delete_run's write built as -            (in a
      create_run_item,   a transaction item, with the run's ticket (cond ticket =                  limits
      delete_run_item    :held): updraft.limits sends it with its counters                         transaction)
    claim_callback       Put CALLBACK#<request> cond attribute_not_exists (the run's  cond         1
                         callback fence: the first delivery wins)
    delete_run_partition Query each shard of RUN#dag#run (TI#, TRY#, CALLBACK#, XCOM#; SC           4 S + n/25
                         every possible shard once the run's item is gone), BatchWrite
                         (+ S3 delete per large XCom)
    get_run_tis          Query each shard of RUN#dag#run, sk begins_with TI#          SC           S (1 per MB)
    get_ti               Get                                                          SC           1
    get_run_meta_and_tis BatchGet RUN, META, the named TI# items and ENDS (any        SC           1 per 100
                         partitions: the mini scheduler's one read, scheduling.downstream)
    count_ends           Update ENDS ADD ended#<task> :1 ..., ReturnValues ALL_NEW    -            1
    record_expansions    Update ENDS SET expanded#<task> = :n ... (a mapped task's    -            1
                         expansion, before its instances are created)
    mark_waiting,        Update ENDS SET waiting = :token / REMOVE waiting cond       cond (clear) 1
      clear_waiting      waiting = :token read before the run's instances
    waiting_tis          Query waiting_tis RUN#dag#run, Limit n (keys only; the end in EC           1
                         a waiting run reads the hits with get_run_meta_and_tis)
    create_ti, queue_ti, expected {None}: Put cond attribute_not_exists(pk), and when  cond         1 (2 for a
      end_try,           it exists an Update cond no state (a cleared item keeps its               cleared item
      apply_ti_change,   try number); else Update cond state IN (...) [OR no state]                or a lost
      mark_ti            [AND try_id = :t] (one write, transition_ti, behind all five)             race)
    reset_ti (clear)     Update REMOVE state, try_id cond state = :expected [AND      cond         1
                         try_id = :t]
    transition_item,     a transition / reset / deletion of an instance built as a    -            (in a
      reset_item,        transaction item, cond ticket = :held (updraft.limits sends               limits
      delete_ti_item     it with its counters: a claim, a release)                                 transaction)
    set_ti_note          Update SET/REMOVE note (creates a stateless item if absent)  -            1
    record_try           Put TRY# cond attribute_not_exists (first record wins)       cond         1
    get_tries            Query RUN#dag#run, sk begins_with TRY#<task>#<index>#        SC           1
    start_ti             Update state = running cond state = queued AND try_id = :t,  cond         1
                         ReturnValues ALL_NEW (the worker keeps the try as started)
    heartbeat            Update lease cond try_id = :t AND state IN (queued, running) cond         1
    set_blocked_reason   Update SET/REMOVE blocked_reason cond state = :expected      cond         1
                         (a queue_ti, or any change to queued, REMOVEs it in the same write); with the
                         priority weight, SET the waiting_tis keys too
    get_pool,            Get POOL record (default_pool: Put cond attribute_not_exists SC           1 (+2 the
      pool_slots         first, when absent)                                                       first time)
    set_pool             Get POOL record (include_deferred kept), Put it              SC           2
    list_pools           Query list_index POOLS, BatchGet POOL records                EC find, SC  2
    delete_pool          Delete POOL cond attribute_exists                            cond         1
    put_xcom, get_xcom   Put / Get RUN#dag#run / XCOM#... (+ S3 if large)             SC           1
    list_xcoms           Query sk begins_with XCOM#<task>#[<map_index+1>#] (every     SC           1 (S for every
                         shard for every map index)                                                map index)
    clear_xcoms          Query + Delete each                                          SC           1 + n
    get_variable,        Get VARIABLE#/META (+ KMS Decrypt when encrypted)             SC           1 (+1 KMS)
      get_connection     Get CONNECTION#/META (+ KMS Decrypt)
    set_variable,        Put (+ KMS Encrypt); only_if_new: cond attribute_not_exists  cond         1 (+1 KMS)
      put_connection     (the API's POST), else last writer wins (Variable.set)
    delete_variable,     Delete cond attribute_exists                                 cond         1
      delete_connection
    list_variables,      Query list_index VARIABLES / CONNECTIONS, BatchGet (+ KMS    EC find, SC  1 + n/100
      list_connections   Decrypt per item)                                                         (+ n KMS)
    put_event_log        Put EVENTS#/EVENT# cond attribute_not_exists (a retried      cond         1
                         request has the same id: recorded once)
    get_event_log        Get EVENTS#<id % N>/EVENT#<id>                               SC           1
    list_event_logs      Query EVENTS#0..N-1, sk BETWEEN the bounds' ids               SC           N (1 per MB)
    heartbeat_component  Put HEARTBEAT cond at absent or older, at most once per      cond         0-1
                         ``every`` per process
    last_heartbeat       Get HEARTBEAT#<component>                                    SC           1
    delete_run_items     Query each shard of RUN#dag#run (every possible one once     SC           S + n
                         the run's item is gone), Delete each
    delete_dag_items     Query DAG#<dag_id>, Delete each (META last)                  SC           1 + n
    next_backfill_id     Update BACKFILL_SEQUENCE ADD value 1 (returns the new value)  -            1
    create_backfill      Put ACTIVE_BACKFILL cond attribute_not_exists (False: 409),  cond         2
                         Put BACKFILL cond attribute_not_exists
    get_backfill,        Get BACKFILL# / ACTIVE_BACKFILL#                              SC           1
      active_backfill_id
    list_backfills       Query list_index BACKFILLS#<dag>, BatchGet BACKFILL            EC find, SC  2
    active_backfills     Query list_index ACTIVE_BACKFILLS, BatchGet markers, BatchGet  EC find, SC  1-3
                         backfills (a marker 2 min old without its backfill is deleted)
    set_backfill_paused  Update BACKFILL cond exists AND completed_at absent           cond         1
    advance_backfill     Update SET created cond created = expected AND not completed  cond         1
    complete_backfill    Update SET completed_at cond absent; Delete marker cond id    cond         2-3
    runs_dated_between   Query runs_by_date run_date_sk BETWEEN from AND to            SC           1 per page
    get_task_state,      Get TASK_STATE#<ti>/KEY#<key> (expired: absent) / ASSET_STATE  SC           1
      get_asset_state
    set_task_state,      Put (last write wins; ``expires`` TTL epoch seconds when it    -            1
      set_asset_state    expires)
    list_/clear_task_    Query TASK_STATE#<ti> / ASSET_STATE#<id> (+ Delete each)      SC           1 (+ n)
      state, ..._asset_state

Limits and capacity: a limit's counters (``updraft.limits``) are items of ~100 bytes whatever the holders, one
per 64 slots up to 32 shards, so a busy pool or parallelism spreads its writes over its shards' partition keys.
The LSI caps each ``DAG#<dag_id>`` item collection at 10 GB: versions above large_item_bytes go to S3, so that is
millions of runs per DAG.
"""

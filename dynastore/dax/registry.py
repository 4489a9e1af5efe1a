"""Every DAX method the endpoint answers, by the id the clients send."""

from __future__ import annotations

from dynastore.dax.batch import batch_get_item, batch_write_item
from dynastore.dax.methods import (
    BATCH_GET_ITEM,
    BATCH_WRITE_ITEM,
    DEFINE_ATTRIBUTE_LIST,
    DEFINE_ATTRIBUTE_LIST_ID,
    DEFINE_KEY_SCHEMA,
    DELETE_ITEM,
    ENDPOINTS,
    GET_ITEM,
    PUT_ITEM,
    QUERY,
    SCAN,
    TRANSACT_GET_ITEMS,
    TRANSACT_WRITE_ITEMS,
    UPDATE_ITEM,
    Method,
    define_attribute_list,
    define_attribute_list_id,
    define_key_schema,
    delete_item,
    endpoints,
    get_item,
    put_item,
    query,
    scan,
    update_item,
)
from dynastore.dax.transactions import transact_get_items, transact_write_items

METHODS: dict[int, Method] = {
    ENDPOINTS: endpoints,
    DEFINE_KEY_SCHEMA: define_key_schema,
    DEFINE_ATTRIBUTE_LIST_ID: define_attribute_list_id,
    DEFINE_ATTRIBUTE_LIST: define_attribute_list,
    GET_ITEM: get_item,
    PUT_ITEM: put_item,
    UPDATE_ITEM: update_item,
    DELETE_ITEM: delete_item,
    QUERY: query,
    SCAN: scan,
    BATCH_GET_ITEM: batch_get_item,
    BATCH_WRITE_ITEM: batch_write_item,
    TRANSACT_GET_ITEMS: transact_get_items,
    TRANSACT_WRITE_ITEMS: transact_write_items,
}

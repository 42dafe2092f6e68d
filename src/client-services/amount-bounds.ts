/**
 * An amount outside its client service's transaction bounds, as SQL function client_service_amount_bounds
 * (src/client-services/sql/client_service_amount_bounds.sql) names its values, amounts as Postgres prints them.
 * Every acceptance that checks the bounds answers it as outcome AMOUNT_BOUNDS, with these values in its detail.
 */
export interface AmountBounds {
  minimum: string;
  maximum: string;
}

import { applyDecorators } from '@nestjs/common';
import { IsNotEmpty, IsString, Matches, MaxLength, registerDecorator, ValidationOptions } from 'class-validator';
import { isCurrency } from '../currencies';
import type { ValidationContext } from '../errors/request-validation.error';
import { amountProblem, MAX_INTEGER_DIGITS, MONEY_SCALE, nonNegativeAmountProblem } from '../money';

/** String limits of the provider contract §10. */
export const LIMITS = {
  name: 100,
  email: 100,
  msisdn: 25,
  identificationNumber: 50,
  code: 32,
  reference: 64,
  text: 255,
  country: 64,
} as const;

/** A phone number: digits with an optional leading +, at most 25 characters (LIMITS.msisdn). */
export const MSISDN = /^(?:\+\d{6,24}|\d{6,25})$/;

/** A UUID in its canonical text form (what Postgres' uuid type accepts without error, and all our ids look like). */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A required, non-blank string of at most `max` characters; `options` (e.g. a `context`) go to every rule. */
export function RequiredText(max: number, options: ValidationOptions = {}) {
  return applyDecorators(
    IsString(options),
    IsNotEmpty(options),
    MaxLength(max, options),
    Matches(/\S/, { ...options, message: '$property must not be blank' }),
  );
}

/**
 * Phone number: digits with an optional leading +, at most 25 characters. The contexts tell a missing number
 * (not a string) from a malformed one, for interfaces that answer them differently.
 */
export function IsMsisdn(contexts: { missing?: ValidationContext; invalid?: ValidationContext } = {}) {
  return applyDecorators(
    IsString({ context: contexts.missing }),
    MaxLength(LIMITS.msisdn, { context: contexts.invalid }),
    Matches(MSISDN, {
      message: '$property must be 6 or more digits with an optional leading +',
      context: contexts.invalid,
    }),
  );
}

/** A positive money amount: a JSON number (or numeric string), at most 4 decimals and 15 integer digits. */
export function IsMoneyAmount(options?: ValidationOptions) {
  return function (target: object, propertyName: string) {
    registerDecorator({
      name: 'isMoneyAmount',
      target: target.constructor,
      propertyName,
      options,
      validator: {
        validate: (value: unknown) => amountProblem(value) === null,
        defaultMessage: (args) => `${args?.property} ${amountProblem(args?.value) ?? 'is invalid'}`,
      },
    });
  };
}

/** A money amount that may be zero (floors, fees, minimums): not negative, same scale rules as IsMoneyAmount. */
export function IsNonNegativeMoney(options?: ValidationOptions) {
  return function (target: object, propertyName: string) {
    registerDecorator({
      name: 'isNonNegativeMoney',
      target: target.constructor,
      propertyName,
      options,
      validator: {
        validate: (value: unknown) => nonNegativeAmountProblem(value) === null,
        defaultMessage: (args) =>
          `${args?.property} must be a number of at least 0 with at most ${MONEY_SCALE} decimal places and ${MAX_INTEGER_DIGITS} integer digits`,
      },
    });
  };
}

export function IsCurrencyCode(options?: ValidationOptions) {
  return function (target: object, propertyName: string) {
    registerDecorator({
      name: 'isCurrencyCode',
      target: target.constructor,
      propertyName,
      options,
      validator: {
        validate: (value: unknown) => isCurrency(value),
        defaultMessage: (args) => `${args?.property} must be a supported ISO 4217 currency code`,
      },
    });
  };
}

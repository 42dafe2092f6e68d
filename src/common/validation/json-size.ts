import { registerDecorator } from 'class-validator';

/** Free JSON a merchant attaches (source_transaction_data, extra_data), bounded so it cannot bloat every record. */
export function IsBoundedJson(maxBytes = 8192) {
  return function (target: object, propertyName: string) {
    registerDecorator({
      name: 'isBoundedJson',
      target: target.constructor,
      propertyName,
      validator: {
        validate: (value: unknown) => Buffer.byteLength(JSON.stringify(value ?? null)) <= maxBytes,
        defaultMessage: (args) => `${args?.property} must be at most ${maxBytes} bytes of JSON`,
      },
    });
  };
}

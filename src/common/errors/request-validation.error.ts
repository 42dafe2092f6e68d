import { BadRequestException, ValidationError } from '@nestjs/common';

/**
 * What a validation decorator may carry in its `context` option for the interfaces whose errors have codes of
 * their own: the gateway's status code and description (collection document §7), with a request field some
 * gateway answers echo, or the payment statement's error_code. A decorator without context gets each
 * interface's generic validation answer.
 */
export interface ValidationContext {
  gateway?: { code: number; description: string; echo?: { field: string; as: string } };
  statementErrorCode?: string;
  /** The payout family's error_code (disbursement document §7) for a broken rule of a payout or airtime body. */
  payoutErrorCode?: string;
}

/** One failed rule: the message and the context of the decorator that failed. */
export interface ValidationProblem {
  message: string;
  context: ValidationContext;
}

/**
 * A body (or query) that failed its DTO's rules. Its response is Nest's usual `{statusCode, message[], error}`;
 * each interface's error filter renders it in its own shape from `problems` (in declaration order).
 */
export class RequestValidationError extends BadRequestException {
  constructor(
    readonly problems: ValidationProblem[],
    /** The object validated (a DTO instance), for error shapes that echo a field of the request. */
    readonly target: object | undefined,
  ) {
    super(problems.length > 0 ? problems.map((p) => p.message) : ['Request body is invalid']);
  }

  static fromErrors(errors: ValidationError[]): RequestValidationError {
    return new RequestValidationError(problemsOf(errors), errors[0]?.target);
  }
}

function problemsOf(errors: ValidationError[], prefix = ''): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  for (const error of errors) {
    const path = prefix ? `${prefix}.${error.property}` : error.property;
    for (const [constraint, message] of Object.entries(error.constraints ?? {})) {
      problems.push({
        message: prefix ? `${path}: ${message}` : message,
        context: (error.contexts?.[constraint] ?? {}) as ValidationContext,
      });
    }
    if (error.children?.length) problems.push(...problemsOf(error.children, path));
  }
  return problems;
}
